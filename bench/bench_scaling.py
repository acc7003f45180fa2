"""Cost of the dynamics vs the number of links and of modes per link, with Pinocchio's ABA.

Planar chains (vertical joint axes, gravity along -z) of 1, 2, 4, 6 and 8 identical links,
every link a beam with 0 (rigid rod), 1, 2, 3 or 5 in-plane modes. For each chain, per call:

* ``forward_dynamics`` called from Python, and the same kernel in a compiled loop (no
  Python-to-numba call), and the mass matrix alone in a compiled loop;
* the articulated-body forward dynamics (``chain_kernels.aba``) in a compiled loop;
* one RK4 step, inside ``Simulation.advance`` (compiled, many steps per call);
* ``pinocchio.aba`` from Python on the rigid chain with the same links (beams as rods,
  built by hand, see ``bench_common``), and the ratio of our forward dynamics to it.

Then chains of 1 to 32 links with 2 modes each, both forward dynamics in compiled loops:
the exponent of their growth with the number of links, fitted over the whole range and
local between 16 and 32 links (where fixed costs no longer hide it).

Run: ``.venv/bin/python bench/bench_scaling.py``.
"""

import time

import numpy as np
import pinocchio

import bench_common as common
from flexible_manipulator.mechanics.chain import Beam, Joint, Link, RigidBody, SerialChain
from flexible_manipulator.mechanics.simulation import Simulation

LINKS = (1, 2, 4, 6, 8)
MODES = (0, 1, 2, 3, 5)
REPEATS = 7
BATCH = 0.04                    # seconds of work per timed batch


def planar_chain(links, modes):
    """Build a planar chain of identical flexible aluminium strips with hubs and payloads."""
    hub = RigidBody(0.1, (0.0, 0.0, 0.0), ((5e-5, 0, 0), (0, 5e-5, 0), (0, 0, 5e-5)))
    payload = RigidBody(0.05, (0.0, 0.0, 0.0), ((1e-5, 0, 0), (0, 1e-5, 0), (0, 0, 1e-5)))
    beam = Beam(0.243, (4.725, 472.5), (modes, 0), damping_ratio=0.005)
    chain = [Link(f'link{j}', Joint(f'joint{j}', damping=0.01, armature=0.002), 0.3, hub, beam,
                  payload) for j in range(links)]
    return SerialChain(f'planar{links}x{modes}', chain, gravity_base=(0.0, 0.0, -9.80665))


def per_call(function, estimate):
    """Median time [us] of one call of ``function``, batches of about BATCH seconds."""
    calls = max(3, int(BATCH / max(estimate, 1e-7)))
    return common.time_interleaved({'f': function}, calls, REPEATS)['f']


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
    data, a = model.create_data(), model.arrays
    nv = model.nv
    q, v = rng.normal(0.0, 1e-3, nv), rng.normal(0.0, 1e-2, nv)
    q[:links] = rng.uniform(-1.0, 1.0, links)
    u = rng.normal(0.0, 0.1, links)
    row = {'nv': nv}

    def python_fd():
        model.forward_dynamics(data, q, v, u)

    row['fd'] = per_call(python_fd, rough(python_fd))
    estimate = row['fd'] * 1e-6
    calls = max(10, int(BATCH / estimate))
    loops = (('fd_loop', lambda: common.forward_dynamics_loop(a, data, q, v, u, calls)),
             ('aba_loop',
              lambda: common.articulated_forward_dynamics_loop(a, data, q, v, u, calls)),
             ('mass_loop', lambda: common.mass_matrix_loop(a, data, q, calls)))
    for key, loop in loops:
        row[key] = common.time_interleaved({key: loop}, 1, REPEATS)[key] / calls
    step = 1e-6
    sim = Simulation(model, step, 'rk4', q, v)
    sim.advance(u, step)
    steps = max(10, int(BATCH / (4 * estimate)))
    row['rk4'] = common.time_interleaved({'rk4': lambda: sim.advance(u, steps * step)}, 1,
                                         REPEATS)['rk4'] / steps
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


def main():
    """Measure every chain and print the table."""
    rng = np.random.default_rng(0)
    common.forward_dynamics_loop(planar_chain(1, 1).arrays, planar_chain(1, 1).create_data(),
                                 np.zeros(2), np.zeros(2), np.zeros(1), 1)
    print(f'machine: {common.machine()}; pinocchio {pinocchio.__version__}')
    print(f'median of {REPEATS} batches of ~{BATCH * 1e3:.0f} ms each; times in us per call\n')
    print('| links | modes/link | nv | forward dynamics from Python | forward dynamics, '
          'compiled loop | articulated (ABA), compiled loop | mass matrix, compiled loop | '
          'RK4 step | Pinocchio aba (rigid, from Python) | forward dynamics / aba |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    rows = {}
    for links in LINKS:
        for modes in MODES:
            r = rows[links, modes] = measure(links, modes, rng)
            print(f'| {links} | {modes} | {r["nv"]} | {r["fd"]:.1f} | {r["fd_loop"]:.1f} '
                  f'| {r["aba_loop"]:.1f} | {r["mass_loop"]:.1f} | {r["rk4"]:.1f} '
                  f'| {r["aba"]:.2f} '
                  f'| {r["fd"] / r["aba"]:.0f} |', flush=True)
    overhead = [r['fd'] - r['fd_loop'] for r in rows.values()]
    print(f'\nPython-to-numba call of forward_dynamics: {np.median(overhead):.1f} us median '
          f'(min {min(overhead):.1f}, max {max(overhead):.1f}) over the {len(rows)} chains')
    for modes in (0, 3):
        line = [rows[n, modes] for n in LINKS]
        print(f'{modes} modes/link: compiled forward dynamics grows as nv^'
              f'{exponent([r["nv"] for r in line], [r["fd_loop"] for r in line]):.2f} '
              f'with the number of links')
    line = [rows[8, m] for m in MODES[1:]]
    print(f'8 links: compiled forward dynamics grows as nv^'
          f'{exponent([r["nv"] for r in line], [r["fd_loop"] for r in line]):.2f} with the '
          'modes per link')


def link_scaling(rng, links=(1, 2, 4, 8, 16, 32), modes=2):
    """Both forward dynamics, compiled, on chains of ``links`` links with ``modes`` each."""
    print(f'\n| links ({modes} modes each) | nv | composite M + Cholesky [us] | articulated '
          '(ABA) [us] | composite / ABA |')
    print('|---|---|---|---|---|')
    rows = []
    for n in links:
        model = planar_chain(n, modes)
        data, a = model.create_data(), model.arrays
        q, v = rng.normal(0.0, 1e-3, model.nv), rng.normal(0.0, 1e-2, model.nv)
        q[:n] = rng.uniform(-1.0, 1.0, n)
        u = rng.normal(0.0, 0.1, n)
        # Both solve M a = B u - h; M of a long chain is ill-conditioned (cond ~3e8 at 32
        # links), so they agree to about cond(M) * eps of the largest acceleration, and
        # their residuals against M are of the same size.
        articulated = model.articulated_forward_dynamics(data, q, v, u)
        composite = model.forward_dynamics(data, q, v, u)
        assert np.max(np.abs(articulated - composite)) <= 1e-8 * np.max(np.abs(composite))
        calls = max(3, int(BATCH / (2e-6 * model.nv ** 1.5)))
        times = common.time_interleaved({
            'fd': lambda: common.forward_dynamics_loop(a, data, q, v, u, calls),
            'aba': lambda: common.articulated_forward_dynamics_loop(a, data, q, v, u, calls)},
            1, REPEATS)
        rows.append((n, times['fd'] / calls, times['aba'] / calls))
        print(f'| {n} | {model.nv} | {rows[-1][1]:.1f} | {rows[-1][2]:.1f} '
              f'| {rows[-1][1] / rows[-1][2]:.2f} |', flush=True)
    n, fd, aba = (np.array(column) for column in zip(*rows))
    for name, y in (('composite', fd), ('articulated', aba)):
        print(f'{name}: cost grows as links^{exponent(n, y):.2f} over {n[0]}-{n[-1]} links, '
              f'local exponent 16-32: {np.log(y[-1] / y[-2]) / np.log(n[-1] / n[-2]):.2f}')


if __name__ == '__main__':
    main()
    link_scaling(np.random.default_rng(1))
