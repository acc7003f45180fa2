"""Cosserat links: CPU per simulated second at equal tip accuracy against PyElastica.

Part 1, the soft cantilever of test/test_cosserat_pyelastica.py (0.5 m, r = 1 cm,
E = 5 MPa, clamped, falling 0.4 m under gravity in 0.5 s), the same rod in both codes.
Each code's tip error is measured against its OWN converged answer: PyElastica's
extrapolated in its element count n (first order, observed), ours at strain order 10 and
a 0.1 ms step. The two converged answers differ by a model-form gap (PyElastica scales its
bending couple and section inertia with the dilatation), printed too. CPU time is the
process CPU time of one 0.5 s run, median (min-max) of several runs. PyElastica's cost at
an accuracy finer than its runs reach is extrapolated from its measured order and its
cost growth in n (marked 'extrap.').

Part 2, the shipped Cosserat arms (config/models/two_link_soft.yaml, planar, and
two_link_spatial_soft.yaml) under gravity from rest, joints free, headless: real-time
factor per step with rosenbrock2, and the tip error against a 0.25 ms run.

Part 3, the cost of one forward dynamics (M, h and v', called from Python) of planar
chains of n Cosserat links with bending of order p, extension and shear of order 1, on
the default 2(p + 1) + 2 nodes per link: median of 7 interleaved batches, and the
exponents in links and in strain order fitted over the large end.

Part 4, a metal link (bench/pyelastica_link.py: the aluminium strip of two_link_flexible,
30 x 3 mm, 0.5 m, pinned, slewed by a hub torque 0.5 sin(2 pi t / 0.2 s) N m for 0.2 s),
as part 1: each code against its own converged answer (PyElastica's extrapolated in n at
second order, observed; ours at bending order 8 and the finest step), CPU per run, the
model-form gap, and the costs at equal tip accuracy. Ours: one Cosserat link with bending
in the plane only (inextensible and unshearable: the strip's shear compliance
E I / (k G A L^2) is 9e-6), the torque held over 125 us sampled at mid-interval.

Part 5, O(n): the cost of one forward dynamics of the planar chains of part 3 at bending
order 2 against links (4 to 32), the composite solve (M, h, Cholesky) beside the
articulated-body recursion (``model.articulated``), each call checked against the
other (largest relative difference printed), median (min-max) of 7 interleaved batches and
the local exponents in links between 8 and 16 and between 16 and 32.

Part 6, the soft cantilever of part 1 against SoRoMoX 0.5.0 (bench/soromox_rod.py: the
same rod as a JAX `GVS` rod, the same Legendre strains, nodes and Magnus steps: the same
discrete model, checked by its stiffness matrix and the gap between the two converged tips).
Each code against its own converged answer at bending order 16 (extension and shear 8):
ours with rosenbrock3 at 62.5 us, SoRoMoX with Bosh3 at 62.5 us. Ours: rosenbrock2 and
rosenbrock3 at 5, 2.5, 2, 1 and 0.5 ms (steps that divide the 0.05 s sampling period),
bending orders 2 to 16. SoRoMoX: diffrax's explicit solvers at a constant step, whose step
is capped by stability, not accuracy: orders 2, 4 and 8, each at the largest stable step of
Bosh3 (the cheapest stable solver tried; Tsit5, SoRoMoX's default, takes 6 evaluations per
step to Bosh3's 3 and diverges at a smaller step) on the grid 250, 200, 125, 100, 62.5 us
(the next step up diverges: shown, one run). CPU per run is the process CPU time (every
thread) of one 0.5 s run, median (min-max) of 3 after warm-up calls; SoRoMoX's model build
(eager JAX) and its compile (a first call less a second) are printed apart and not
counted. Then the cheapest run of each code within 1 cm, 1 mm and 0.1 mm of its own
converged tip, and the ratio SoRoMoX / ours.

Run: python bench/bench_cosserat.py (PyElastica from requirements-test.txt); ``metal``,
``links`` or ``soromox``: only part 4, 5 or 6.
"""

import math
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'test'))
sys.path.insert(0, HERE)

from bench_common import machine, model_path  # noqa: E402
import pyelastica_link  # noqa: E402
import soft_cantilever  # noqa: E402
import soromox_rod  # noqa: E402
import test_cosserat_pyelastica as soft  # noqa: E402  (the rod's one definition)

from flexible_manipulator.mechanics.model.chain import Chain  # noqa: E402
from flexible_manipulator.mechanics.model.link_part import LinkPart  # noqa: E402
from flexible_manipulator.mechanics.cosserat.rod import CosseratRod, Section  # noqa: E402
from flexible_manipulator.mechanics.cosserat.strain_basis import StrainBasis  # noqa: E402
from flexible_manipulator.mechanics.simulation import Simulation  # noqa: E402
from flexible_manipulator.model_config import load_model  # noqa: E402

ELEMENTS = (25, 50, 100, 200)
ORDERS = (2, 3, 4, 6, 8)
# (integrator, steps [s]): rosenbrock2 at the steps it needed before rosenbrock3, which
# is third order and takes the steps its accuracy allows (the 50 ms sampling period must be
# a whole number of steps)
RUNS = (('rosenbrock2', (1e-3, 5e-4)), ('rosenbrock3', (1e-2, 5e-3, 2e-3)))
REFERENCE = ('rosenbrock3', 1e-4)       # ours converged: strain order 10, this step
TARGETS = (1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4)


def timed(function, repeats):
    """Return (result of the last call, CPU times [s] of ``repeats`` calls)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        result = function()
        times.append(time.process_time() - start)
    return result, times


def strains(order):
    """Strain basis of the planar soft rod at bending order p (axial, shear: p // 2)."""
    return {'bending_y': order, 'extension': max(1, order // 2), 'shear_z': max(1, order // 2)}


def fmt(times):
    return f'{statistics.median(times):.3f} ({min(times):.3f}-{max(times):.3f})'


def rod_comparison():
    """Part 1: print both codes' errors and costs, then the equal-accuracy table."""
    print('\n## soft cantilever, 0.5 s of fall: tip error against each code\'s own converged '
          'answer, CPU seconds per run')
    elastica = {}
    for n in ELEMENTS:
        tips, times = timed(lambda: soft.pyelastica_tips(n, 1e-3 / n), 3 if n < 200 else 2)
        elastica[n] = (tips, times)
    order, reference, rows = pyelastica_table(elastica, 'dt = 1e-3/n s', '0.5 s')
    ours_ref = soft.our_tips(strains(10), REFERENCE[1], REFERENCE[0])
    print(f'model-form gap, our converged tip vs PyElastica\'s: '
          f'{np.linalg.norm(ours_ref - reference, axis=1).max():.2e} m (max over time)')
    print(f'ours converged: strain order 10, {REFERENCE[0]} at {REFERENCE[1] * 1e3:g} ms')
    print('| ours: strain orders (bending, extension, shear), integrator, step | coordinates '
          '| tip error [m] | CPU [s] per 0.5 s, median (min-max) |')
    print('|---|---|---|---|')
    ours = []
    for method, steps in RUNS:
        for p in ORDERS:
            for step in steps:
                tips, times = timed(lambda: soft.our_tips(strains(p), step, method), 5)
                error = np.linalg.norm(tips - ours_ref, axis=1).max()
                ours.append((error, statistics.median(times), p, f'{method} {step * 1e3:g} ms'))
                s = strains(p)
                print(f'| {s["bending_y"]}, {s["extension"]}, {s["shear_z"]}, {method}, '
                      f'{step * 1e3:g} ms | {sum(v + 1 for v in s.values())} | {error:.2e} | '
                      f'{fmt(times)} |')
    equal_accuracy(rows, order, ours, TARGETS, 'n and dt = 1e-3/n both scale')


def pyelastica_table(elastica, stepping, duration):
    """Extrapolate PyElastica's runs and print their errors; return (order, reference, rows).

    ``elastica``: n -> (tips, CPU times) for increasing n; the order is observed from the
    three finest runs, the reference is the Richardson extrapolation of the two finest;
    rows: (n, error against the reference, median CPU).
    """
    counts = sorted(elastica)
    gaps = [np.linalg.norm(elastica[a][0] - elastica[b][0], axis=1).max()
            for a, b in zip(counts[-3:-1], counts[-2:])]
    order = math.log2(gaps[0] / gaps[1])
    finest, finer = elastica[counts[-1]][0], elastica[counts[-2]][0]
    reference = finest + (finest - finer) / (2.0 ** order - 1.0)
    print(f'PyElastica 1.0.0 (position Verlet, {stepping}): observed order in n {order:.2f}; '
          f'reference = extrapolation of n = {counts[-2]}, {counts[-1]}')
    print(f'| PyElastica elements | tip error [m] | CPU [s] per {duration}, median (min-max) |')
    print('|---|---|---|')
    rows = []
    for n in counts:
        tips, times = elastica[n]
        error = np.linalg.norm(tips - reference, axis=1).max()
        rows.append((n, error, statistics.median(times)))
        print(f'| {n} | {error:.2e} | {fmt(times)} |')
    return order, reference, rows


def equal_accuracy(rows, order, ours, targets, why):
    """Print the CPU of both codes at each target tip accuracy and their ratio.

    ``rows``: PyElastica's (n, error, CPU) by n; ``order``: its observed order in n;
    ``ours``: (error, CPU, strain order, integrator and step). Where PyElastica's runs do not
    reach a target its cost is extrapolated: error ~ C n^-order, cost ~ D n^growth, both fitted
    over the two finest runs (``why`` says what its cost growth in n comes from).
    """
    (n1, _, c1), (n2, e2, c2) = rows[-2], rows[-1]
    growth = math.log(c2 / c1) / math.log(n2 / n1)
    print(f'\nPyElastica cost growth in n: {growth:.2f} ({why})')
    print('| tip accuracy [m] | PyElastica CPU [s] | ours CPU [s] (order, integrator, step) | '
          'PyElastica / ours |')
    print('|---|---|---|---|')
    for target in targets:
        measured = [c for _, e, c in rows if e <= target]
        if measured:
            theirs, label = min(measured), ''
        else:
            n = n2 * (e2 / target) ** (1.0 / order)
            theirs, label = c2 * (n / n2) ** growth, f' extrap. (n ~ {n:.0f})'
        fits = [(c, p, h) for e, c, p, h in ours if e <= target]
        if not fits:
            print(f'| {target:g} | {theirs:.3g}{label} | not reached | - |')
            continue
        cost, p, how = min(fits)
        print(f'| {target:g} | {theirs:.3g}{label} | {cost:.3g} ({p}, {how}) | '
              f'{theirs / cost:.0f}x |')


def soft_arm(name):
    """Part 2: a shipped Cosserat arm's real-time factor and tip error per step."""
    model = load_model(model_path(name))
    duration = 2.0

    def run(step, method):
        sim = Simulation(model, step, method)
        sim.advance(np.zeros(model.nu), duration)
        return model.section_pose(sim.data, sim.q, 1, model.links[1].length)[1]
    reference = run(1.25e-4, 'rosenbrock3')
    print(f'\n## {name} ({model.nq} coordinates), 2 s falling from rest under gravity, '
          'joints free; reference: rosenbrock3 at 0.125 ms')
    print('| integrator | step | tip error at 2 s [m] | CPU [s], median (min-max) of 5 | '
          'real-time factor |')
    print('|---|---|---|---|---|')
    for method in ('rosenbrock2', 'rosenbrock3'):
        for step in (4e-3, 2e-3, 1e-3):
            tip, times = timed(lambda: run(step, method), 5)
            print(f'| {method} | {step * 1e3:g} ms | {np.linalg.norm(tip - reference):.1e} | '
                  f'{fmt(times)} | {duration / statistics.median(times):.1f}x |')


def planar_chain(links, order):
    """n identical soft links (0.3 m, r = 1 cm) on revolute joints about y."""
    section = soft.same_section()
    parts = [LinkPart(f'link{j}', CosseratRod(StrainBasis(
        {'bending_y': order, 'extension': 1, 'shear_z': 1}, 0.3), section), axis=(0, 1, 0))
        for j in range(links)]
    return Chain(parts, gravity=soft.GRAVITY)


def scaling():
    """Part 3: microseconds per forward dynamics against links and strain order."""
    links, orders = (1, 2, 4, 8), (1, 2, 4, 8)
    chains = {(n, p): planar_chain(n, p) for n in links for p in orders}
    calls = {}
    for key, chain in chains.items():
        data = chain.create_data()
        q = 0.1 * np.ones(chain.nq)
        u = np.zeros(chain.nu)
        chain.forward_dynamics(data, q, q, u)
        calls[key] = (chain, data, q, u)
    samples = {key: [] for key in chains}
    for _ in range(7):
        for key, (chain, data, q, u) in calls.items():
            start = time.perf_counter()
            for _ in range(50):
                chain.forward_dynamics(data, q, q, u)
            samples[key].append((time.perf_counter() - start) / 50 * 1e6)
    print('\n## forward dynamics per call [us], median of 7 batches: n links x bending '
          'order p (+ extension and shear of order 1)')
    print('| links | ' + ' | '.join(f'p = {p} (nv)' for p in orders) + ' |')
    print('|---|' + '---|' * len(orders))
    median = {key: statistics.median(v) for key, v in samples.items()}
    for n in links:
        print(f'| {n} | ' + ' | '.join(f'{median[n, p]:.1f} ({chains[n, p].nv})'
                                       for p in orders) + ' |')
    for p in orders:
        local = math.log(median[8, p] / median[4, p]) / math.log(2.0)
        print(f'p = {p}: local exponent in links (4 -> 8) {local:.2f}')
    for n in links:
        local = math.log(median[n, 8] / median[n, 4]) / math.log(2.0)
        print(f'{n} links: local exponent in bending order (4 -> 8) {local:.2f}')


def linear_cost():
    """Part 5: microseconds per forward dynamics against links, composite and articulated."""
    links, order = (4, 8, 16, 32), 2
    algorithms = ('composite', 'articulated')
    calls, worst = {}, 0.0
    for n in links:
        chain = planar_chain(n, order)
        data = chain.create_data()
        rng = np.random.default_rng(n)
        q, v = 0.1 * rng.normal(size=chain.nq), rng.normal(size=chain.nv)
        u = rng.normal(size=chain.nu)
        results = []
        for algorithm in algorithms:
            function = getattr(chain, f'{algorithm}_forward_dynamics')
            results.append(function(data, q, v, u).copy())
            calls[n, algorithm] = (function, data, q, v, u)
        worst = max(worst, np.abs(results[1] - results[0]).max() / np.abs(results[0]).max())
    samples = {key: [] for key in calls}
    for _ in range(7):
        for key, (function, data, q, v, u) in calls.items():
            repeats = max(5, 400 // key[0])
            start = time.perf_counter()
            for _ in range(repeats):
                function(data, q, v, u)
            samples[key].append((time.perf_counter() - start) / repeats * 1e6)
    print(f'\n## forward dynamics per call [us] against links, bending order {order} (+ '
          'extension and shear of order 1), median (min-max) of 7 batches')
    print('| links (nv) | composite | articulated |')
    print('|---|---|---|')
    for n in links:
        print(f'| {n} ({planar_chain(n, order).nv}) | '
              + ' | '.join(fmt(samples[n, a]) for a in algorithms) + ' |')
    for algorithm in algorithms:
        median = {n: statistics.median(samples[n, algorithm]) for n in links}
        print(f'{algorithm}: local exponent in links 8 -> 16 '
              f'{math.log(median[16] / median[8]) / math.log(2.0):.2f}, 16 -> 32 '
              f'{math.log(median[32] / median[16]) / math.log(2.0):.2f}')
    print(f'largest relative difference of the two accelerations: {worst:.1e}')


METAL_DURATION, METAL_TORQUE, METAL_SAMPLE = 0.2, 0.5, 2e-3      # [s], [N m], [s]
METAL_ELEMENTS = (10, 20, 40)
METAL_ORDERS = (1, 2, 3, 4, 6)
METAL_RUNS = (('rosenbrock2', (2e-3, 1e-3, 2.5e-4, 1.25e-4)), ('rosenbrock3', (2e-3, 1e-3, 5e-4)))
METAL_REFERENCE = ('rosenbrock3', 1.5625e-5)    # ours converged: bending order 8
METAL_TARGETS = (1e-3, 3e-4, 1e-4, 3e-5)


def metal_torque(t):
    """Hub torque [N m] at time t [s]: one sine period over METAL_DURATION, then zero."""
    return METAL_TORQUE * math.sin(2.0 * math.pi * t / METAL_DURATION) \
        if t < METAL_DURATION else 0.0


def metal_link(order):
    """The strip as one Cosserat link on a pin about z, bending in the x-y plane only."""
    c = pyelastica_link.section()
    density, young = pyelastica_link.DENSITY, pyelastica_link.YOUNG
    shear = c['shear_factor'] * c['shear_modulus'] * c['area']
    section = Section(density * c['area'], [density * (c['inertia_y'] + c['inertia_z']),
                                            density * c['inertia_y'], density * c['inertia_z']],
                      [c['shear_modulus'] * c['torsion'], young * c['inertia_y'],
                       young * c['inertia_z'], young * c['area'], shear, shear])
    rod = CosseratRod(StrainBasis({'bending_z': order}, pyelastica_link.LENGTH), section)
    return Chain([LinkPart('strip', rod)], gravity=(0.0, 0.0, 0.0))


def metal_tips(order, step, method='rosenbrock2'):
    """Our tip (x, y) every 2 ms [m]: ``method`` with ``step``, the torque held over a step.

    The torque is sampled at the middle of each step (as a plant holds a command over its
    step; second order in the step). The tip is the pin's rotation applied to the tip
    section in the link frame (the plant's vectorized `FrameTransforms`, as TF computes it).
    """
    chain = metal_link(order)
    frames = chain.frame_transforms([(0, None), (0, pyelastica_link.LENGTH)])
    data = chain.create_data()
    sim, tips, per = Simulation(chain, step, method), [], round(METAL_SAMPLE / step)
    torque = np.zeros(1)
    for k in range(round(METAL_DURATION / step)):
        torque[0] = metal_torque((k + 0.5) * step)
        sim.advance(torque, step)
        if (k + 1) % per == 0:
            frames.update(data, sim.q)
            tips.append((frames.R[0] @ frames.p[1] + frames.p[0])[:2])
    return np.array(tips)


def metal_comparison():
    """Part 4: the metal link in both codes, costs at equal accuracy."""
    if pyelastica_link.elastica is None:
        print('\n## metal link: skipped, PyElastica is not installed')
        return
    print('\n## metal link (aluminium strip, pinned, hub torque slew, 0.2 s): tip error against '
          'each code\'s own converged answer, CPU seconds per run')
    elastica = {}
    for n in METAL_ELEMENTS:
        (tips, _), times = timed(lambda: pyelastica_link.tip_motion(
            n, metal_torque, METAL_DURATION, 2e-3), 2)
        elastica[n] = (tips[:, :2], times)
    order, reference, rows = pyelastica_table(
        elastica, f'dt = {pyelastica_link.VERLET_STEP:g} s, set by the shear rotation of an '
        'element whatever n', '0.2 s')
    ours_ref = metal_tips(8, METAL_REFERENCE[1], METAL_REFERENCE[0])
    print(f'model-form gap, our converged tip vs PyElastica\'s: '
          f'{np.linalg.norm(ours_ref - reference, axis=1).max():.2e} m (max over time; tip '
          f'excursion {np.max(np.linalg.norm(reference - reference[0], axis=1)):.3f} m)')
    print(f'ours converged: bending order 8, {METAL_REFERENCE[0]} at '
          f'{METAL_REFERENCE[1] * 1e6:g} us')
    print('| ours: bending order, integrator, step | tip error [m] | CPU [s] per 0.2 s, median '
          '(min-max) of 5 |')
    print('|---|---|---|')
    ours = []
    for method, steps in METAL_RUNS:
        for p in METAL_ORDERS:
            for step in steps:
                tips, times = timed(lambda: metal_tips(p, step, method), 5)
                error = np.linalg.norm(tips - ours_ref, axis=1).max()
                ours.append((error, statistics.median(times), p, f'{method} {step * 1e6:g} us'))
                print(f'| {p}, {method}, {step * 1e6:g} us | {error:.2e} | {fmt(times)} |')
    equal_accuracy(rows, order, ours, METAL_TARGETS, 'dt fixed by the shear rotation')


SX_REFERENCE = (16, 6.25e-5, 6.25e-5)   # bending order, our rosenbrock3 step, SoRoMoX's [s]
SX_ORDERS = (2, 4, 6, 8, 12, 16)
SX_STEPS = (5e-3, 2.5e-3, 2e-3, 1e-3, 5e-4)
SX_RUNS = ((2, 'bosh3', 2e-4, 2.5e-4), (4, 'bosh3', 2e-4, 2.5e-4),   # order, solver, the
           (8, 'bosh3', 1.25e-4, 2e-4))                                # stable and next step
SX_TARGETS = (1e-2, 1e-3, 1e-4)


def cantilever_tips(order, step, method):
    """Our soft cantilever's tip every 0.05 s [m]: bending order p, ``method``, ``step``."""
    return soft_cantilever.modal_tips(strains(order), soft.same_section(), step, method)


def our_runs(reference):
    """Part 6, ours: print each run's error and CPU; return rows (error, CPU, label)."""
    print('| ours: strain orders (bending, extension, shear), method, step | coordinates '
          '| tip error [m] | CPU [s] per 0.5 s, median (min-max) of 3 |')
    print('|---|---|---|---|')
    rows = []
    for p in SX_ORDERS:
        s = strains(p)
        for method in ('rosenbrock2', 'rosenbrock3'):
            cantilever_tips(p, SX_STEPS[0], method)                  # warm-up
            for step in SX_STEPS:
                tips, times = timed(lambda: cantilever_tips(p, step, method), 3)
                error = np.linalg.norm(tips - reference, axis=1).max()
                label = f'{s["bending_y"]}, {s["extension"]}, {s["shear_z"]}, {method}, ' \
                    f'{step * 1e3:g} ms'
                rows.append((error, statistics.median(times), label))
                print(f'| {label} | {sum(v + 1 for v in s.values())} | {error:.2e} '
                      f'| {fmt(times)} |')
    return rows


def soromox_model(order, solver='bosh3'):
    """Build and compile SoRoMoX's rod at bending order p; return (build, compile) CPU [s].

    The compile is the first call less the second, both at a 1 ms step (500 steps: it may
    diverge, no matter); the step is traced, so one compile serves every step of a
    ``solver``. A model built before (cached) costs no build.
    """
    section = soft.same_section()
    start = time.process_time()
    soromox_rod.rod(order, soromox_rod.shear_modulus(section))
    build = time.process_time() - start
    _, (first, again) = timed(lambda: soromox_rod.tips(order, section, 1e-3, solver), 2)
    return build, first - again


def soromox_runs(reference):
    """Part 6, SoRoMoX: print each run's error and CPU; return rows (error, CPU, label)."""
    section = soft.same_section()
    print('| SoRoMoX: strain orders (bending, extension, shear), solver, step | tip error [m] '
          '| CPU [s] per 0.5 s, median (min-max) of 3 |')
    print('|---|---|---|')
    rows, setup = [], []
    for p, solver, step, unstable in SX_RUNS:
        s = strains(p)
        setup.append(soromox_model(p, solver))
        tips, times = timed(lambda: soromox_rod.tips(p, section, step, solver), 3)
        error = np.linalg.norm(tips - reference, axis=1).max()
        name = f'{s["bending_y"]}, {s["extension"]}, {s["shear_z"]}, {solver.capitalize()}'
        rows.append((error, statistics.median(times), f'{name}, {step * 1e6:g} us'))
        print(f'| {rows[-1][2]} | {error:.2e} | {fmt(times)} |')
        tips, times = timed(lambda: soromox_rod.tips(p, section, unstable, solver), 1)
        state = 'diverges (NaN)' if not np.all(np.isfinite(tips)) else \
            f'{np.linalg.norm(tips - reference, axis=1).max():.2e}'
        print(f'| {name}, {unstable * 1e6:g} us | {state} | {times[0]:.3f} (1 run) |')
    builds, compiles = zip(*setup)
    print(f'not counted above, per model: JAX compile (first call less a run) '
          f'{min(compiles):.1f}-{max(compiles):.1f} s; model build (eager JAX) '
          f'{min(builds):.1f}-{max(builds):.1f} s')
    return rows


def soromox_comparison():
    """Part 6: the soft cantilever in both codes, costs at 1 cm, 1 mm and 0.1 mm."""
    if soromox_rod.soromox is None:
        print('\n## SoRoMoX: skipped, SoRoMoX is not installed (pip install -r '
              'bench/requirements.txt)')
        return
    section = soft.same_section()
    order, ours_step, their_step = SX_REFERENCE
    print(f'\n## soft cantilever, 0.5 s of fall, against SoRoMoX {soromox_rod.version()}: '
          'tip error against each code\'s own converged answer, CPU seconds per run')
    ours_ref = cantilever_tips(order, ours_step, 'rosenbrock3')
    build, compile_time = soromox_model(order)
    their_ref, (run,) = timed(lambda: soromox_rod.tips(order, section, their_step, 'bosh3'), 1)
    rod = CosseratRod(StrainBasis(strains(order), soft_cantilever.LENGTH), section)
    print(f'converged answers at order {order}: ours rosenbrock3 {ours_step * 1e6:g} us, '
          f'SoRoMoX Bosh3 {their_step * 1e6:g} us ({run:.1f} s CPU, one run; model build '
          f'{build:.1f} s, JAX compile {compile_time:.1f} s)')
    gap = np.linalg.norm(ours_ref - their_ref, axis=1).max()
    same = soromox_rod.stiffness_gap(order, section, rod.stiffness_matrix)
    print(f'gap between the two converged tips: {gap:.1e} m (max over time); their '
          f'stiffness matrices differ by {same:.0e} (relative)')
    ours = our_runs(ours_ref)
    theirs = soromox_runs(their_ref)
    print('| tip accuracy [m] | SoRoMoX CPU [s] (run) | ours CPU [s] (run) | SoRoMoX / ours |')
    print('|---|---|---|---|')
    for target in SX_TARGETS:
        cells = [cheapest(rows, target) for rows in (theirs, ours)]
        text = ['not reached' if c is None else f'{c[0]:.3g} ({c[1]})' for c in cells]
        ratio = '-' if None in cells else f'{cells[0][0] / cells[1][0]:.0f}x'
        print(f'| {target:g} | {text[0]} | {text[1]} | {ratio} |')


def cheapest(rows, target):
    """The (CPU, label) of the cheapest of ``rows`` (error, CPU, label) within ``target``."""
    fits = [(cost, label) for error, cost, label in rows if error <= target]
    return min(fits) if fits else None


def main():
    """Print the machine, then the six parts (``metal``, ``links``, ``soromox``: one)."""
    print(machine())
    if sys.argv[1:] == ['metal']:
        metal_comparison()
        return
    if sys.argv[1:] == ['links']:
        linear_cost()
        return
    if sys.argv[1:] == ['soromox']:
        soromox_comparison()
        return
    rod_comparison()
    for name in ('two_link_soft', 'two_link_spatial_soft'):
        soft_arm(name)
    scaling()
    metal_comparison()
    linear_cost()
    soromox_comparison()


if __name__ == '__main__':
    main()
