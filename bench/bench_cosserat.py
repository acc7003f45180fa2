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

Run: python bench/bench_cosserat.py (PyElastica from requirements-test.txt).
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
import test_cosserat_pyelastica as soft  # noqa: E402  (the rod's one definition)

from flexible_manipulator.mechanics.cosserat.chain import (  # noqa: E402
    CosseratChain, CosseratLink)
from flexible_manipulator.mechanics.cosserat.rod import CosseratRod  # noqa: E402
from flexible_manipulator.mechanics.cosserat.strain_basis import StrainBasis  # noqa: E402
from flexible_manipulator.mechanics.simulation import Simulation  # noqa: E402
from flexible_manipulator.model_config import load_model  # noqa: E402

ELEMENTS = (25, 50, 100, 200)
ORDERS = (2, 3, 4, 6, 8)
STEPS = (1e-3, 5e-4)
TARGETS = (1e-2, 5e-3, 2e-3, 1e-3, 5e-4)


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
    gaps = [np.linalg.norm(elastica[a][0] - elastica[b][0], axis=1).max()
            for a, b in zip(ELEMENTS[1:-1], ELEMENTS[2:])]
    order = math.log2(gaps[0] / gaps[1])
    finest, finer = elastica[ELEMENTS[-1]][0], elastica[ELEMENTS[-2]][0]
    reference = finest + (finest - finer) / (2.0 ** order - 1.0)
    print(f'PyElastica 1.0.0 (position Verlet, dt = 1e-3/n s): observed order in n '
          f'{order:.2f}; reference = extrapolation of n = {ELEMENTS[-2]}, {ELEMENTS[-1]}')
    print('| PyElastica elements | tip error [m] | CPU [s] per 0.5 s, median (min-max) |')
    print('|---|---|---|')
    rows = []
    for n in ELEMENTS:
        tips, times = elastica[n]
        error = np.linalg.norm(tips - reference, axis=1).max()
        rows.append((n, error, statistics.median(times)))
        print(f'| {n} | {error:.2e} | {fmt(times)} |')
    ours_ref = soft.our_tips(strains(10), 1e-4)
    print(f'model-form gap, our converged tip vs PyElastica\'s: '
          f'{np.linalg.norm(ours_ref - reference, axis=1).max():.2e} m (max over time)')
    print('| ours: strain orders (bending, extension, shear), rosenbrock2 step | coordinates '
          '| tip error [m] | CPU [s] per 0.5 s, median (min-max) |')
    print('|---|---|---|---|')
    ours = []
    for p in ORDERS:
        for step in STEPS:
            tips, times = timed(lambda: soft.our_tips(strains(p), step), 5)
            error = np.linalg.norm(tips - ours_ref, axis=1).max()
            ours.append((error, statistics.median(times), p, step))
            s = strains(p)
            print(f'| {s["bending_y"]}, {s["extension"]}, {s["shear_z"]}, {step * 1e3:g} ms '
                  f'| {sum(v + 1 for v in s.values())} | {error:.2e} | {fmt(times)} |')
    # PyElastica: error ~ C n^-order, cost ~ D n^growth (fits over the two finest runs)
    (n1, _, c1), (n2, e2, c2) = rows[-2], rows[-1]
    growth = math.log(c2 / c1) / math.log(n2 / n1)
    print(f'\nPyElastica cost growth in n: {growth:.2f} (n and dt = 1e-3/n both scale)')
    print('| tip accuracy [m] | PyElastica CPU [s] | ours CPU [s] (orders, step) | '
          'PyElastica / ours |')
    print('|---|---|---|---|')
    for target in TARGETS:
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
        cost, p, h = min(fits)
        print(f'| {target:g} | {theirs:.3g}{label} | {cost:.3g} ({p}, {h * 1e3:g} ms) | '
              f'{theirs / cost:.0f}x |')


def soft_arm(name):
    """Part 2: a shipped Cosserat arm's real-time factor and tip error per step."""
    model = load_model(model_path(name))
    duration = 2.0

    def run(step):
        sim = Simulation(model, step, 'rosenbrock2')
        sim.advance(np.zeros(model.nu), duration)
        return model.section_pose(sim.q, 1, model.links[1].length)[:3, 3]
    reference = run(2.5e-4)
    print(f'\n## {name} ({model.nq} coordinates), 2 s falling from rest under gravity, '
          'joints free, rosenbrock2')
    print('| step | tip error at 2 s [m] | CPU [s], median (min-max) of 5 | real-time factor |')
    print('|---|---|---|---|')
    for step in (4e-3, 2e-3, 1e-3):
        tip, times = timed(lambda: run(step), 5)
        print(f'| {step * 1e3:g} ms | {np.linalg.norm(tip - reference):.1e} | {fmt(times)} | '
              f'{duration / statistics.median(times):.1f}x |')


def planar_chain(links, order):
    """n identical soft links (0.3 m, r = 1 cm) on revolute joints about y."""
    section = soft.same_section()
    parts = [CosseratLink(f'link{j}', CosseratRod(StrainBasis(
        {'bending_y': order, 'extension': 1, 'shear_z': 1}, 0.3), section), axis=(0, 1, 0))
        for j in range(links)]
    return CosseratChain(parts, gravity=soft.GRAVITY)


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


def main():
    """Print the machine, then the three parts."""
    print(machine())
    rod_comparison()
    for name in ('two_link_soft', 'two_link_spatial_soft'):
        soft_arm(name)
    scaling()


if __name__ == '__main__':
    main()
