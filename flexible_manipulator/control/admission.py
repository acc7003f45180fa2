"""Start-up analysis of a program on an arm: whether it may run, and how.

`ProgramController` runs these once per program when it is built (its module doc lists
the checks); the functions read the controller's settings and models (``law``: its
``model``, ``control_model``, ``n_joints``, ``period``, ``settings.hold``,
``delay_periods``, ``realization_kind``, ``redefine_margin``, ``analysis_positions``,
``data``, ``input_matrix``) and write their verdicts into the program's `ProgramEntry`:

* `check_discrete_bound`: every row's gains against the control period and hold scheme;
* `rest_configuration`: the configuration at rest on the program at t = 0, where the
  others are evaluated;
* `check_admission` (every model): rank of the rows and realizability along the inputs,
  at the start and sampled along the reference (`check_along_reference`);
* `check_internal_dynamics` (flexible models): zero dynamics of the output and the sampled
  closed loop of the full linearized plant, with the lambda-point limit (`lambda_limit`)
  offered or substituted; then `check_robustness`: the same loop on every plant of the
  declared ``uncertainty`` set (``uncertainty``), refused below it.
"""

from collections import namedtuple

import math

import numpy as np

from ..mechanics.equilibrium import rest_sensitivity, static_equilibrium
from ..config_checks import ConfigError
from .loop_checks import LinearLoop, row_critical_period, stable, STABILITY_TOLERANCE
from . import joint_follower
from .arm_modes import elastic_modes
from .program_config import program_row_field
from .realization import check_realizability, dependent_rows, RealizabilityError
from .uncertainty import describe, factors_text, FollowerCheck, RobustnessCheck
from .zero_dynamics import analyze_output, link_angle_output, stable_fraction

# Program times sampled along the reference by `check_along_reference`.
ALONG_SAMPLES = 48
# Poses along the reference (besides its start) where the follower's loop is checked
# (`following_check`), and how far [rad] a pose must be from those chosen to count.
FOLLOWER_POSES = 2
DISTINCT_POSE = 1e-3
# Largest joint change per Gauss-Newton iteration of `solve_rows` [rad or m].
MAX_JOINT_STEP = 0.5


class UnstableLoopError(ConfigError):
    """A program whose linearized closed loop is unstable on the model itself.

    Its output is minimum phase: a law that closes the loop otherwise may pass.
    ``radius``: the loop's spectral radius (sampled loops; None for a continuous one or a
    refusal by the zero dynamics alone), what `ProgramController`'s ``auto`` compares
    when no law it knows is admitted.
    """

    def __init__(self, message, radius=None):
        """Keep the message and the radius."""
        super().__init__(message)
        self.radius = radius


class NotRobustError(UnstableLoopError):
    """A program refused by `check_robustness` (its loop is unstable in the uncertainty).

    ``radius``: the worst plant's spectral radius.
    """


# A redefined output that is not robust is tried again with lambda times this factor, at
# most ROBUST_LAMBDA_STEPS times.
ROBUST_LAMBDA_FACTOR = 0.8
ROBUST_LAMBDA_STEPS = 6
# A refusal offers the largest gains on the ladder alpha x 0.8^k, k <= GAIN_STEPS, that pass.
GAIN_STEPS = 12
Redefinition = namedtuple('Redefinition', 'rows note swapped')
Redefinition.__doc__ = ('A program to build instead of a refused one: its ``rows`` (built, '
                        '`rows.Row`: the redefined outputs of the redefinable rows, the others '
                        'as they were), the ``note`` that says why and the indices of the '
                        'rows ``swapped``.')


def check_discrete_bound(stabilization, period, hold, field):
    """Refuse gains outside the discrete bound; return the smallest critical period [s].

    ZOH: T < min(1/alpha, 4 alpha/beta^2) per position row (`stabilization.check`).
    """
    try:
        stabilization.check(period, hold)
    except ValueError as error:
        raise ConfigError(f'{field}.gains: {error}') from None
    return min(row_critical_period(stabilization, i, hold)
               for i in range(stabilization.order.size))


def check_admission(law, entry, field, q0, solved):
    """Refuse a program that can never be met, for every model: at its start and along it.

    At the rest configuration solved from the rows (`rest_configuration`): rows that add
    no rank to the ones before them (`dependent_rows`) are refused when the rows cannot
    all be met there (their references contradict each other) and, for the servo
    realization, always; the servo realization needs A M^-1 B of full row rank m.
    Redundant but consistent rows under the ideal realization are kept, with a note.
    Then along the reference (`check_along_reference`), when the start was solved.
    """
    rank = _check_rows_at(law, entry, field, 0.0, q0, solved, 'the program start')
    if solved:
        check_along_reference(law, entry, field, q0, rank)


def check_along_reference(law, entry, field, q0, start_rank, samples=ALONG_SAMPLES):
    """Sample the program's times up to its span; refuse where it cannot be met.

    At ``samples`` times evenly spread over (0, span] (the time by which every reference
    has taken all its values: `ProgramEntry.span`), the rows are solved for the joints,
    warm-started from the previous sample. Refused: rows that cannot be met there (the
    reference leaves the arm's reach or contradicts itself), rows that lose rank against
    the start (``start_rank``; a singular configuration on the path), and, for the servo
    realization, A M^-1 B without full row rank. Where the joint columns of A have a
    condition number past ``law.condition_limit``, a note names the time (the law will be
    damped or large there).
    """
    span = entry.span
    if span <= 0.0:
        return
    q = q0.copy()
    worst = (0.0, 0.0)                      # (condition number, time) of the joint columns
    entry.along = []
    for t in np.linspace(0.0, span, samples + 1)[1:]:
        q, met = solve_rows(law, entry, t, q)
        entry.along.append(q[:law.n_joints].copy())
        where = f't = {t:.4g} s of {span:.4g} s'
        if not met:
            raise ConfigError(
                f'{field}: the rows cannot be met at {where} along the reference (|phi| = '
                f'{np.linalg.norm(entry.program.phi):.3g} at the closest configuration found '
                f'from the previous sample, joints {np.round(q[:law.n_joints], 4).tolist()}): '
                'the reference leaves the arm\'s reach or contradicts itself')
        rank = _check_rows_at(law, entry, field, t, q, True, where, start_rank)
        s = np.linalg.svd(entry.program.jacobian[:, :law.n_joints], compute_uv=False)
        condition = s[0] / s[rank - 1] if rank and s[rank - 1] > 0.0 else np.inf
        worst = max(worst, (condition, t))
    if worst[0] > law.condition_limit:
        entry.notes.append(f'the rows pass near a singular configuration: condition number '
                           f'{worst[0]:.3g} of their joint columns at t = {worst[1]:.4g} s '
                           f'(condition_limit {law.condition_limit:g})')


def _check_rows_at(law, entry, field, t, q, solved, where, start_rank=None):
    """Rank and realizability of the rows at program time ``t`` and configuration ``q``.

    Returns the rank; raises `ConfigError` as `check_admission` says (``where`` names the
    place in messages). Given ``start_rank``, a rank below it is refused too.
    """
    cm, program = law.control_model, entry.program
    program.evaluate(t, q, np.zeros(cm.nv))
    A, names = program.jacobian, entry.row_names
    rank, dependent = dependent_rows(A)
    listed = ', '.join(repr(names[i]) for i in dependent)
    at = (f'rank {rank} of {A.shape[0]} at {where} (joints '
          f'{np.round(q[:law.n_joints], 4).tolist()})')
    if start_rank is not None and rank < start_rank:
        raise ConfigError(f'{field}.rows: rows {listed} lose rank along the reference ({at}, '
                          f'{start_rank} at the start): a singular configuration on the path')
    if dependent and start_rank is None:
        if not solved:
            raise ConfigError(
                f'{field}.rows: rows {listed} depend on the rows before them ({at}) '
                f'and the references cannot all be met (|phi| = '
                f'{np.linalg.norm(program.phi):.3g} at the best configuration from '
                'analysis_positions): this program can never be met')
        if law.realization_kind == 'servo':
            raise ConfigError(
                f'{field}.rows: rows {listed} depend on the rows before them ({at}); '
                'the servo realization needs independent rows: remove them')
        entry.notes.append(f'rows {listed} are redundant ({at}); realized with the '
                           'pseudo-inverse')
    if law.realization_kind == 'servo':
        try:
            check_realizability(cm.mass_matrix(law.data, q), A, law.input_matrix)
        except RealizabilityError as error:
            raise ConfigError(f'{field}: {error} ({A.shape[0]} rows, {cm.nu} inputs, at '
                              f'{where})') from None
    return rank


def rest_configuration(law, entry):
    """Rest configuration on the program at t = 0: joints solved from the rows.

    From ``law.analysis_positions`` (modes at rest), after the hold rows capture it;
    returns (q, solved) as `solve_rows`.
    """
    q = law.control_model.neutral_configuration().astype(float)
    q[:law.n_joints] = law.analysis_positions
    for hold in entry.holds:
        hold.capture(q)
    return solve_rows(law, entry, 0.0, q)


def solve_rows(law, entry, t, guess, iterations=50, tolerance=1e-10):
    """Joints at rest that meet the rows at program time ``t``, the modes at rest with them.

    Damped Gauss-Newton on the joints from ``guess``, the elastic coordinates of the
    control model at their static equilibrium for the current joints
    (`equilibrium.static_equilibrium`, warm-started) before each evaluation, and so the
    rows' joint Jacobian at rest J_theta + J_e de/dtheta (`equilibrium.rest_sensitivity`).
    Returns (q, True) when |phi| < ``tolerance``, else (``guess``, False).
    """
    cm, n = law.control_model, law.n_joints
    q = guess.copy()
    zero = np.zeros(cm.nv)
    program = entry.program
    for _ in range(iterations):
        try:
            q = static_equilibrium(cm, q, law.data)
        except ValueError:
            break
        program.evaluate(t, q, zero)
        if float(np.linalg.norm(program.phi)) < tolerance:
            return q, True
        J = program.jacobian[:, :n]
        if cm.nv > n:
            J = J + program.jacobian[:, n:] @ rest_sensitivity(cm, q, law.data)
        step = J.T @ np.linalg.solve(J @ J.T + 1e-8 * np.eye(J.shape[0]), program.phi)
        # At most MAX_JOINT_STEP per joint and iteration: the rows' Jacobian holds near q
        # only (a soft arm's rest changes with its joints), so a long step may overshoot.
        q[:n] -= step * min(1.0, MAX_JOINT_STEP / max(float(np.max(np.abs(step))), 1e-300))
        if not np.all(np.isfinite(q)):
            break
    program.evaluate(t, guess, zero)
    return guess.copy(), False


def non_minimum_phase_policy(law, policy):
    """Return (policy, automatic): the program's ``non_minimum_phase`` as the checks apply it.

    Given (refuse, redefine, allow), it is applied as written. Not given (None): refuse,
    except under ``realization`` and ``control_model`` both ``auto`` (the checks pick the
    law), where it is redefine and ``automatic`` is True. Why auto redefines: a
    non-minimum-phase output has no law that tracks it; model following inverts the same
    output on its internal model, and computed torque on the rigid twin tracks the twin's
    point at the joint angles, the redefined output at lambda = 0, blind to every
    deflection. The redefined output at the largest lambda the sampled loop admits (its
    rows only: joint and hold rows, collocated with the inputs, stay as written) is the
    closest output that can be tracked, so it is auto's candidate before another law; the
    note says so. A law chosen by hand leaves the output to the program (refused, with
    the offer).
    """
    if policy is not None:
        return policy, False
    settings = law.settings
    if settings.realization == settings.control_model == 'auto':
        return 'redefine', True
    return 'refuse', False


def _rows_text(rows, indices):
    """Say which rows ``indices`` are: their types in order and their indices."""
    kinds = list(dict.fromkeys(rows[i].row_type for i in indices))
    return (f'{" and ".join(kinds)} row{"s" if len(indices) > 1 else ""} '
            f'({", ".join(f"rows[{i}]" for i in indices)})')


def check_internal_dynamics(law, entry, rows, policy, field, redefined, q0, solved):
    """Zero dynamics and sampled closed loop; refuse, redefine or allow (module doc).

    ``rows``: the program's built rows (`rows.Row`); ``policy``: its ``non_minimum_phase``
    (None: not given, `non_minimum_phase_policy`); ``q0``, ``solved``: its rest
    configuration (`rest_configuration`); ``redefined``: the note of a program that is
    already a substitute (never redefined twice). Returns None (admitted, perhaps with a
    note) or a `Redefinition` for the caller to build instead: every redefinable row
    (``Row.redefinable``: point, tcp) swapped for its redefined output, when there is one
    and every other row is minimum phase as it is (``Row.minimum_phase``: joint
    coordinates). Raises `ConfigError` when the program is refused; `UnstableLoopError`
    when another law may pass: the output is minimum phase, or it is to be redefined and
    no lambda passes under this law.
    """
    policy, automatic = non_minimum_phase_policy(law, policy)
    full, cm, n = law.model, law.control_model, law.n_joints
    where = (f'linearized at rest at the program start (joints '
             f'{np.round(q0[:n], 4).tolist()}'
             f'{"" if solved else ", rows not met: at analysis_positions"})')
    entry.program.evaluate(0.0, q0, np.zeros(cm.nv))
    C = entry.program.jacobian.copy()
    try:
        loop = LinearLoop(full, cm, q0[:n], law.period, law.realization_kind)
    except ValueError as error:
        raise ConfigError(f'{field}: the arm has no rest at the program start ({error}): a '
                          'link buckles or is overloaded there; start elsewhere') from None
    problems = []
    if C.shape[0] == full.nu:
        try:
            report = analyze_output(full, loop.embed(C), loop.q0,
                                    label=f'program {entry.name!r}')
        except ValueError as error:
            raise ConfigError(f'{field}: not realizable by the inputs ({where}): {error}') \
                from None
        entry.zero_dynamics = report
        if not report.minimum_phase:
            problems.append(report.message)
    else:
        entry.notes.append(f'zero dynamics not analysed: {C.shape[0]} rows for '
                           f'{full.nu} inputs')
    kp, kd = row_gains(entry.stabilization)
    sampled = law.settings.hold == 'zoh'
    if law.estimates_modes:
        # The observer's gain at this rest: what the loops below and the tick use.
        entry.observer_gain = law.design_observer(loop.q0)
    elif law.tests_model:
        # Modes measured: the same observer, for the run-time model test only.
        entry.model_test_gain = law.design_observer(loop.q0)
    # Model following: the law closes its loop on the internal model, without delay.
    delay = 0 if law.following is not None else law.delay_periods
    if sampled:
        entry.sampled_radius = loop.radius(C, kp, kd, delay, entry.observer_gain)
        if not stable(entry.sampled_radius):
            problems.append(loop.describe_radius(entry.sampled_radius, delay))
    elif loop.growth(C, kp, kd) > STABILITY_TOLERANCE:
        problems.append(f'the linearized closed loop is unstable (growth rate '
                        f'{loop.growth(C, kp, kd):.4g} 1/s)')
    if not problems:
        if sampled:
            check_robustness(law, entry, field, where, C, kp, kd, q0)
        return None
    if policy == 'allow':
        entry.notes.append(f'{"; ".join(problems)} ({where}). ALLOWED by '
                           'non_minimum_phase: allow: this program\'s internal dynamics '
                           'are unstable')
        return None
    limit = lambda_limit(law, loop, kp, kd, sampled, delay, entry.observer_gain)
    entry.lambda_limit = limit
    what = ('keeps the sampled closed loop stable (spectral radius < 1 at this period, '
            'ZOH)' if sampled else 'keeps the closed loop stable')
    swapped = [i for i, row in enumerate(rows) if row.redefinable]
    redefinable = (policy == 'redefine' and not redefined and bool(swapped)
                   and all(row.redefinable or row.minimum_phase for row in rows))
    if redefinable and limit > 0.0:
        lam = law.redefine_margin * limit
        kept = [i for i in range(len(rows)) if i not in swapped]
        note = (f'{"; ".join(problems)} ({where}). Redefined output substituted'
                f'{" (auto: non_minimum_phase not given)" if automatic else ""} for the '
                f'{_rows_text(rows, swapped)} with lambda = {lam:.4g} '
                f'({law.redefine_margin:g} x the limit {limit:.4g})'
                + (f', the {_rows_text(rows, kept)} kept (joint outputs: minimum phase)'
                   if kept else ''))
        return Redefinition(_swapped(law, rows, field, swapped, lambda row, model, at, twin:
                                     row.redefined(lam, model, at, twin)), note, swapped)
    offer = (f'the redefined output (lambda_point row) {what} for lambda < {limit:.4g}: '
             f'use e.g. lambda: {law.redefine_margin * limit:.3g}, or '
             'non_minimum_phase: redefine to substitute it' if limit > 0.0 else
             f'no redefined output (lambda_point) {what} either')
    if sampled and limit == 0.0 and cm.n_modes:
        offer += '; ' + loop.mode_hint()
    message = f'{field}: refused ({where}): {"; ".join(problems)}; {offer}'
    non_minimum = entry.zero_dynamics is not None and not entry.zero_dynamics.minimum_phase
    if non_minimum and not redefinable:
        # The output itself is the problem: another law on the same output is no answer.
        raise ConfigError(message)
    # A minimum-phase output, or one to be redefined that no lambda passes under this law:
    # another law may pass (the radius compared: the loop's, when it is what refused).
    raise UnstableLoopError(message, entry.sampled_radius if sampled and not non_minimum
                            else None)


def smaller_lambda(law, redefinition, field, factor=ROBUST_LAMBDA_FACTOR):
    """Return the `Redefinition` with every swapped row's lambda times ``factor``.

    A redefined output admitted on the model may not be robust over the declared
    uncertainty (a longer lever of the modes in the output); a smaller lambda moves it
    toward the joints, whose loop is the robust one. ``field``: the program's, in messages.
    """
    swapped = redefinition.swapped
    rows = _swapped(law, redefinition.rows, field, swapped, lambda row, model, at, twin:
                    row.scaled(factor, model, at, twin))
    lam = rows[swapped[0]].program.lambdas[0]
    note = (f'{redefinition.note.split("; lambda reduced")[0]}; lambda reduced to '
            f'{lam:.4g} to be robust over the declared uncertainty')
    return Redefinition(rows, note, swapped)


def _swapped(law, rows, field, indices, swap):
    """Return the rows, ``swap(row, control model, row field, rigid twin)`` at ``indices``.

    The swapped rows keep their gains; the others are the same rows.
    """
    swapped = list(rows)
    for i in indices:
        row = rows[i]
        new = swap(row, law.control_model, program_row_field(field, i), law.rigid_twin)
        new.gains = row.gains
        swapped[i] = new
    return swapped


def row_gains(stabilization):
    """Diagonal K_p = beta^2 and K_d = 2 alpha of the position rows (k0, k1)."""
    return np.diag(stabilization.k0), np.diag(stabilization.k1)


def lambda_limit(law, loop, kp, kd, sampled, delay, observer=None, samples=100,
                 iterations=30):
    """Largest lambda* with a stable loop for the redefined joint outputs C_lambda.

    ``observer``: the elastic-state observer's gain when the modes are estimated.
    The rows' gains are applied to the n joint outputs when there are n rows (else the
    first row's gains to all). Scan lambda = k / samples, then bisection.
    """
    cm, n = law.control_model, law.n_joints
    if cm.n_joints != cm.nu:
        return 0.0
    if kp.shape[0] != n:
        kp, kd = np.eye(n) * kp[0, 0], np.eye(n) * kd[0, 0]

    def stable_at(lam):
        C = link_angle_output(cm, lam)
        try:
            if sampled:
                return stable(loop.radius(C, kp, kd, delay, observer))
            return loop.growth(C, kp, kd) <= STABILITY_TOLERANCE
        except np.linalg.LinAlgError:
            return False
    return stable_fraction(stable_at, samples, iterations)


def check_robustness(law, entry, field, where, C, kp, kd, q0):
    """Refuse a program whose sampled loop is unstable somewhere in ``law.uncertainty``.

    `uncertainty.RobustnessCheck` at the program's rest ``q0``: the margin and the worst
    plant go to the entry (``robustness_margin``, ``worst_case``). Below a margin of 1,
    `NotRobustError` names the worst plant and the alternatives, with the rigid twin's
    verdict over the same set when the law does not already use it.
    """
    ranges, n = law.uncertainty, law.n_joints
    if law.following is not None:
        # The plant's loop is the follower's about the internal model (`joint_follower`),
        # its bandwidth chosen here, on the model alone too.
        check = following_check(law, entry, q0)
        entry.follower = check.follower
        nominal = check.radius({})
        if not stable(nominal):
            raise UnstableLoopError(
                f'{field}: refused ({where}): model following\'s joint law has a pole '
                f'damped by less than {100 * joint_follower.DAMPING_MARGIN:g} % on the model '
                f'itself at every bandwidth down to '
                f'{joint_follower.bandwidth_of(check.follower):.3g} rad/s (margin '
                f'radius {nominal:.6g}, input delay up to {law.delay_periods} periods)',
                nominal)
    if not any(lo < hi for lo, hi in ranges.values()):
        return
    if law.following is None:
        check = RobustnessCheck(law.model, law.control_model, q0[:n], law.period,
                                law.realization_kind, C, kp, kd, law.delay_periods,
                                entry.observer_gain)
    margin, worst = check.margin(ranges)
    entry.robustness_margin, entry.worst_case = margin, worst
    declared = describe(ranges)
    if margin >= 1.0:
        return

    def offer(what, alternative):
        verdict = alternative.verdict(ranges)
        holds = ('is stable on every plant of the set' if stable(verdict.radius) else
                 'is not robust either')
        return f'{what} {holds} (worst spectral radius {verdict.radius:.6g})'
    offers = []
    if law.following is None and law.rigid_twin is not None and law.has_modes \
            and law.rigid_twin.nu == n:
        offers.append(offer('model_following: true (the same law on an internal model, the '
                            'arm following its joints on the rigid twin)',
                            following_check(law, entry, q0)))
    if law.rigid_twin is not None and law.control_model is not law.rigid_twin:
        offers.append(offer('control_model: rigid_twin (realization: ideal)',
                            RobustnessCheck(law.model, law.rigid_twin, q0[:n], law.period,
                                            'ideal', C[:, :n], kp, kd, law.delay_periods,
                                            None)))
    if law.following is None:
        scale = check.largest_gain(ranges, ROBUST_LAMBDA_FACTOR, GAIN_STEPS)
        offers.append(f'gains alpha x{scale:.3g} (computed: stable on every plant of the set)'
                      if scale is not None else 'no lower gains: none down to alpha x'
                      f'{ROBUST_LAMBDA_FACTOR ** GAIN_STEPS:.2g} is stable on every plant')
    if law.control_model.nv > n:
        offers.append('fewer modelled modes (control_modes)')
    offers.append(f'the uncertainty narrowed to the margin {margin:.3g} of the declared set '
                  '(identify the arm)')
    raise NotRobustError(
        f'{field}: refused: not robust over the declared uncertainty ({declared}; '
        f'{where}): its sampled closed loop survives the set scaled by {margin:.3g} only '
        f'(margin < 1); worst plant: {factors_text(worst.factors)}, spectral radius '
        f'{worst.radius:.6g} > 1 (input delay up to {law.delay_periods} periods'
        f'{", elastic state estimated" if law.estimates_modes else ""}). Robust '
        f'alternatives: {"; ".join(offers)}', worst.radius)


def following_check(law, entry, q0):
    """`uncertainty.FollowerCheck` of model following's plant loop, its law chosen.

    Two ladders of bandwidths w, from the program's smallest alpha down by
    ``joint_follower.BANDWIDTH_STEP``: computed torque on the rigid twin about the internal
    model (K_p = w^2, K_d = 2 w, unfiltered) and the filtered joint law at w; on each the
    first rung whose loop has every pole damped by ``joint_follower.DAMPING_MARGIN`` on
    the model and on every plant of ``law.uncertainty``. The higher of the two is chosen
    (computed torque, the more accurate on the model where it passes: slow link modes),
    the filtered law on a tie; the
    filtered law's last rung when neither passes (the caller refuses then, naming the
    worst plant). On a filtered law, the damping injected at the joints
    (`joint_follower`: centres ``DAMPER_CENTRES`` times the arm's first mode with its
    joints free, gains ``DAMPER_GAINS``) that gives the poles near that mode the largest
    least damping ratio over the set, among those the check admits; none when none does
    better than the law without it.
    """
    n, ranges, stabilization = law.n_joints, law.uncertainty, entry.stabilization
    # Position rows' alpha; a program of velocity rows only: their rate gamma.
    rates = np.where(stabilization.k1 > 0.0, 0.5 * stabilization.k1, stabilization.k0)
    top = float(np.min(rates))
    check = FollowerCheck(law.model, law.rigid_twin, q0[:n], law.period, law.delay_periods,
                          None, ranges.get('payload', (1.0, 1.0)),
                          spread_poses(q0[:n], entry.along or (), FOLLOWER_POSES))
    free = elastic_modes(law.model, q0[:n]).free
    if free.size:
        first = 2.0 * math.pi * float(free[0])
        check.band = tuple(first * f for f in joint_follower.DAMPER_BAND)
    passed = {}
    for kind in ('computed_torque', 'filtered'):
        bandwidth = top
        for _ in range(joint_follower.BANDWIDTH_STEPS):
            check.follower = joint_follower.follower(kind, bandwidth)
            if stable(check.radius({})) and check.stable_on(ranges):
                passed[kind] = check.follower
                break
            bandwidth *= joint_follower.BANDWIDTH_STEP
    if passed:
        # The filtered law on a tie: its integral and payload estimate take out what the
        # feedforward misses off the model, which computed torque leaves to its gains.
        check.follower = max(reversed(list(passed.values())), key=joint_follower.bandwidth_of)
        if check.follower[0] == 'filtered' and check.band is not None:
            _inject_damping(check, ranges, first)
    return check


def spread_poses(start, along, count):
    """Return up to ``count`` of the poses ``along`` farthest from ``start`` and each other.

    Each next pose is the one whose least distance (max |joint difference| [rad]) to the
    start and the poses already chosen is largest, while it exceeds `DISTINCT_POSE`.
    """
    chosen, others = [np.asarray(start, dtype=float)], [np.asarray(q) for q in along]
    while others and len(chosen) <= count:
        distances = [min(np.max(np.abs(q - c)) for c in chosen) for q in others]
        best = int(np.argmax(distances))
        if distances[best] <= DISTINCT_POSE:
            break
        chosen.append(others.pop(best))
    return chosen[1:]


def _inject_damping(check, ranges, first):
    """Add to ``check.follower`` the damper of `following_check`'s doc, if one helps."""
    undamped = check.follower
    best, best_damping = undamped, check.mode_damping(ranges)
    for centre in joint_follower.DAMPER_CENTRES:
        for gain in joint_follower.DAMPER_GAINS:
            check.follower = undamped + (centre * first, gain)
            if not (stable(check.radius({})) and check.stable_on(ranges)):
                continue
            damping = check.mode_damping(ranges)
            if damping > best_damping:
                best, best_damping = check.follower, damping
    check.follower = best
