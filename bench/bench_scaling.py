"""Cost of the dynamics vs the number of links and of modes per link, with Pinocchio's ABA.

Planar chains (vertical joint axes, gravity along -z) of 1, 2, 4, 6 and 8 identical links,
every link a beam with 0 (rigid rod), 1, 2, 3 or 5 in-plane modes. For each chain, per call:

* the composite forward dynamics (mass matrix + Cholesky,
  ``composite_forward_dynamics``) called from Python, and the same kernel in
  a compiled loop (no Python-to-numba call), and the mass matrix alone in a compiled loop;
* the articulated-body forward dynamics (``model.articulated``) in a compiled loop;
* one RK4 step, inside ``Simulation.advance`` (compiled, many steps per call);
* ``pinocchio.aba`` from Python on the rigid chain with the same links (beams as rods,
  built by hand, see ``bench_common``), and the ratio of our forward dynamics to it.

Then chains of 1 to 32 links with 2 modes each, both forward dynamics in compiled loops:
the exponent of their growth with the number of links, fitted over the whole range and
local between 16 and 32 links (where fixed costs no longer hide it); target for the
articulated one: local exponent <= 1.1. Last, chains of 8 links with 1 to 8 modes per
link: the exponent of the articulated cost in the modes per link, fitted over 2-8 modes
and local between the two largest counts (6 and 8); target <= 3 (dense per-link blocks:
a Cholesky factor of the k x k modal block, beam points growing with k).

Every time is the median of REPEATS batches of about 40 ms; the tables of the last two
parts give the range (min-max) of the batches too, with the batches of all chains of one
table interleaved. Each exponent is fitted to the medians; the range after it is that of
the exponents fitted to one batch of every chain at a time. For the first table, the
spread of the batches is summarized in one line.

Run: ``.venv/bin/python bench/bench_scaling.py``.
"""

import time

import numpy as np
import pinocchio

import bench_common as common
from flexible_manipulator.mechanics.link_description import Beam, Joint, Link, RigidBody
from flexible_manipulator.mechanics.links import chain_from_links
from flexible_manipulator.mechanics.simulation import Simulation

LINKS = (1, 2, 4, 6, 8)
MODES = (0, 1, 2, 3, 5)
REPEATS = 7
BATCH = 0.04                    # seconds of work per timed batch
LINKS_TARGET = 1.1              # articulated cost vs links, local exponent at 16-32 links
MODES_TARGET = 3.0              # articulated cost vs modes per link (dense per-link blocks)


def planar_chain(links, modes):
    """Build a planar chain of identical flexible aluminium strips with hubs and payloads."""
    hub = RigidBody(0.1, (0.0, 0.0, 0.0), ((5e-5, 0, 0), (0, 5e-5, 0), (0, 0, 5e-5)))
    payload = RigidBody(0.05, (0.0, 0.0, 0.0), ((1e-5, 0, 0), (0, 1e-5, 0), (0, 0, 1e-5)))
    beam = Beam(0.243, (4.725, 472.5), (modes, 0), damping_ratio=0.005)
    chain = [Link(f'link{j}', Joint(f'joint{j}', damping=0.01, armature=0.002), 0.3, hub, beam,
                  payload) for j in range(links)]
    return chain_from_links(f'planar{links}x{modes}', chain, (0.0, 0.0, -9.80665))


def per_call(function, estimate):
    """Time [us] of one call of ``function`` in each of REPEATS batches of about BATCH s."""
    calls = max(3, int(BATCH / max(estimate, 1e-7)))
    return common.sample_interleaved({'f': function}, calls, REPEATS)['f']['wall']


def looped(loop, calls):
    """Time [us] per iteration of a compiled loop of ``calls`` iterations, in each batch."""
    return [t / calls for t in common.sample_interleaved({'f': loop}, 1, REPEATS)['f']['wall']]


def rough(function):
    """Return a first estimate [s] of one call (after a warm-up call)."""
    function()
    start = time.perf_counter()
    for _ in range(5):
        function()
    return (time.perf_counter() - start) / 5


def measure(links, modes, rng):
    """Time one chain; return the row of the table as a dict."""
    model = planar_chain(links, modes)
    data = model.create_data()
    a = model.kernel_inputs(data)           # the kernels' tables
    nv = model.nv
    q, v = rng.normal(0.0, 1e-3, nv), rng.normal(0.0, 1e-2, nv)
    q[:links] = rng.uniform(-1.0, 1.0, links)
    u = rng.normal(0.0, 0.1, links)
    row = {'nv': nv}

    composite = model.composite_forward_dynamics

    def python_fd():
        composite(data, q, v, u)

    row['fd'] = per_call(python_fd, rough(python_fd))
    estimate = np.median(row['fd']) * 1e-6
    calls = max(10, int(BATCH / estimate))
    loops = (('fd_loop', lambda: common.forward_dynamics_loop(*a, q, v, u, calls)),
             ('aba_loop',
              lambda: common.articulated_forward_dynamics_loop(*a, q, v, u, calls)),
             ('mass_loop', lambda: common.mass_matrix_loop(*a, q, calls)))
    for key, loop in loops:
        row[key] = looped(loop, calls)
    step = 1e-6
    sim = Simulation(model, step, 'rk4', q, v)
    sim.advance(u, step)
    steps = max(10, int(BATCH / (4 * estimate)))
    row['rk4'] = looped(lambda: sim.advance(u, steps * step), steps)
    twin = model.rigid_twin()
    pm = common.to_pinocchio(twin)
    pd = pm.createData()
    qj, vj = q[:links].copy(), v[:links].copy()
    tau = u - common.joint_damping(twin) * vj
    if modes == 0:                       # the rigid chain itself: same computation
        np.testing.assert_allclose(model.forward_dynamics(data, qj, vj, u),
                                   pinocchio.aba(pm, pd, qj, vj, tau), rtol=1e-9, atol=1e-9)
    row['aba'] = per_call(lambda: pinocchio.aba(pm, pd, qj, vj, tau), 2e-6)
    return row


def exponent(x, y):
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def exponents(x, samples):
    """Exponent of the medians, and its range over the batches: (median fit, low, high).

    ``samples[i]`` holds the batch times of point ``x[i]``; the range is that of the
    exponents fitted to batch b of every point, b = 1..REPEATS (the batches of the points
    were interleaved, so batch b of every point ran in the same round).
    """
    median = exponent(x, [np.median(s) for s in samples])
    per_batch = [exponent(x, [s[b] for s in samples]) for b in range(len(samples[0]))]
    return median, min(per_batch), max(per_batch)


def growth(name, variable, unit, points, samples):
    """Print and return the exponents (fit over ``points``, local over the last two).

    ``samples[i]``: the batch times at ``points[i]``; each exponent as `exponents` gives it.
    """
    x = np.array(points, dtype=float)
    fit, local = exponents(x, samples), exponents(x[-2:], samples[-2:])
    print(f'{name}: cost grows as {variable}^{fit[0]:.2f} ({fit[1]:.2f}-{fit[2]:.2f}) over '
          f'{points[0]}-{points[-1]} {unit}, local exponent {points[-2]}-{points[-1]}: '
          f'{local[0]:.2f} ({local[1]:.2f}-{local[2]:.2f})')
    return fit, local


def median(samples):
    """Median of one cell's batch times."""
    return float(np.median(samples))


def relative_range(samples):
    """(max - min) / median of one cell's batch times."""
    return (max(samples) - min(samples)) / median(samples)


def main():
    """Measure every chain and print the table."""
    rng = np.random.default_rng(0)
    warm = planar_chain(1, 1)              # compile or load every loop before timing
    data, zero = warm.create_data(), np.zeros(2)
    tables = warm.kernel_inputs(data)
    common.forward_dynamics_loop(*tables, zero, zero, np.zeros(1), 1)
    common.articulated_forward_dynamics_loop(*tables, zero, zero, np.zeros(1), 1)
    common.mass_matrix_loop(*tables, zero, 1)
    print(f'machine: {common.machine()}; pinocchio {pinocchio.__version__}')
    print(f'median of {REPEATS} batches of ~{BATCH * 1e3:.0f} ms each; times in us per call\n')
    print('| links | modes/link | nv | composite forward dynamics from Python | the same, '
          'compiled loop | articulated (ABA), compiled loop | mass matrix, compiled loop | '
          'RK4 step | Pinocchio aba (rigid, from Python) | composite from Python / aba |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    rows = {}
    for links in LINKS:
        for modes in MODES:
            r = rows[links, modes] = measure(links, modes, rng)
            m = {key: median(value) for key, value in r.items() if key != 'nv'}
            print(f'| {links} | {modes} | {r["nv"]} | {m["fd"]:.1f} | {m["fd_loop"]:.1f} '
                  f'| {m["aba_loop"]:.1f} | {m["mass_loop"]:.1f} | {m["rk4"]:.1f} '
                  f'| {m["aba"]:.2f} '
                  f'| {m["fd"] / m["aba"]:.0f} |', flush=True)
    spreads = sorted((relative_range(value), key, cell) for cell, r in rows.items()
                     for key, value in r.items() if key != 'nv')
    worst = spreads[-1]
    print(f'\nspread of the batches, (max - min) / median, over the {len(spreads)} cells: '
          f'median {100 * np.median([x[0] for x in spreads]):.0f} %, largest '
          f'{100 * worst[0]:.0f} % ({worst[1]}, {worst[2][0]} links x {worst[2][1]} modes)')
    overhead = [median(r['fd']) - median(r['fd_loop']) for r in rows.values()]
    print(f'Python-to-numba call of the composite forward dynamics: '
          f'{np.median(overhead):.1f} us median '
          f'(min {min(overhead):.1f}, max {max(overhead):.1f}) over the {len(rows)} chains')
    for modes in (0, 3):
        line = [rows[n, modes] for n in LINKS]
        print(f'{modes} modes/link: compiled composite forward dynamics grows as nv^'
              f'{exponent([r["nv"] for r in line], [median(r["fd_loop"]) for r in line]):.2f} '
              f'with the number of links')
    line = [rows[8, m] for m in MODES[1:]]
    print(f'8 links: compiled composite forward dynamics grows as nv^'
          f'{exponent([r["nv"] for r in line], [median(r["fd_loop"]) for r in line]):.2f} '
          'with the modes per link')


def interleaved_chains(chains, rng):
    """Time both compiled forward dynamics of every chain, the batches interleaved.

    ``chains`` maps a label to a model. Returns, per label, the batch times [us per call]
    of the composite ('fd') and articulated ('aba') forward dynamics.
    """
    functions = {}
    for label, model in chains.items():
        data = model.create_data()
        a = model.kernel_inputs(data)       # the kernels' tables
        q, v = rng.normal(0.0, 1e-3, model.nv), rng.normal(0.0, 1e-2, model.nv)
        n = model.n_joints
        q[:n] = rng.uniform(-1.0, 1.0, n)
        u = rng.normal(0.0, 0.1, n)
        # Both solve M a = B u - h; M of a long chain is ill-conditioned (cond ~3e8 at 32
        # links), so they agree to about cond(M) * eps of the largest acceleration, and
        # their residuals against M are of the same size.
        articulated = model.articulated_forward_dynamics(data, q, v, u)
        composite = model.composite_forward_dynamics(data, q, v, u)
        assert np.max(np.abs(articulated - composite)) <= 1e-8 * np.max(np.abs(composite))
        for key, loop in (('fd', common.forward_dynamics_loop),
                          ('aba', common.articulated_forward_dynamics_loop)):
            estimate = rough(lambda loop=loop, a=a, data=data, q=q, v=v, u=u:
                             loop(*a, q, v, u, 100)) / 100
            calls = max(3, int(BATCH / estimate))
            functions[label, key] = (lambda loop=loop, a=a, data=data, q=q, v=v, u=u,
                                     calls=calls: loop(*a, q, v, u, calls)), calls
    samples = common.sample_interleaved({key: f for key, (f, _) in functions.items()}, 1,
                                        REPEATS)
    times = {label: {} for label in chains}
    for (label, key), (_, calls) in functions.items():
        times[label][key] = [t / calls for t in samples[label, key]['wall']]
    return times


def link_scaling(rng, links=(1, 2, 4, 8, 16, 32), modes=2):
    """Both forward dynamics, compiled, on chains of ``links`` links with ``modes`` each."""
    chains = {n: planar_chain(n, modes) for n in links}
    times = interleaved_chains(chains, rng)
    print(f'\n| links ({modes} modes each) | nv | composite M + Cholesky [us] | articulated '
          '(ABA) [us] | composite / ABA |')
    print('|---|---|---|---|---|')
    for n, model in chains.items():
        t = times[n]
        print(f'| {n} | {model.nv} | {common.with_range(t["fd"])} '
              f'| {common.with_range(t["aba"])} | {median(t["fd"]) / median(t["aba"]):.2f} |')
    local = {}
    for name, key in (('composite', 'fd'), ('articulated', 'aba')):
        _, local[key] = growth(name, 'links', 'links', links, [times[k][key] for k in links])
    value = local['aba'][0]
    print(f'target: articulated local exponent {links[-2]}-{links[-1]} links <= '
          f'{LINKS_TARGET:g}: {value:.2f} -> {"met" if value <= LINKS_TARGET else "NOT met"}')


def mode_scaling(rng, modes=(1, 2, 3, 4, 5, 6, 8), links=8, fit_from=2):
    """Articulated forward dynamics, compiled, at ``links`` links vs the modes per link."""
    chains = {k: planar_chain(links, k) for k in modes}
    times = interleaved_chains(chains, rng)
    print(f'\n| modes per link ({links} links) | nv | articulated (ABA) [us] '
          '| composite M + Cholesky [us] |')
    print('|---|---|---|---|')
    for k, model in chains.items():
        print(f'| {k} | {model.nv} | {common.with_range(times[k]["aba"])} '
              f'| {common.with_range(times[k]["fd"])} |')
    large = [k for k in modes if k >= fit_from]
    fit, local = growth('articulated', 'modes', 'modes per link', large,
                        [times[m]['aba'] for m in large])
    print(f'target: articulated exponent in the modes per link <= {MODES_TARGET:g} (dense '
          f'per-link blocks): fit {fit[0]:.2f}, local {local[0]:.2f} -> '
          f'{"met" if max(fit[0], local[0]) <= MODES_TARGET else "NOT met"}')


if __name__ == '__main__':
    main()
    link_scaling(np.random.default_rng(1))
    mode_scaling(np.random.default_rng(2))
