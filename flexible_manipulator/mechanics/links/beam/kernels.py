"""The floating-frame beam's steps in the walk (numba): its mass points and its tip.

Link j's assumed modes (``modal_beam``) displace its centre line by u(x, q) in the link
frame; its point masses are summed in that frame as one generalized body (`points`), and
a section (the tip, or any x) is reached by the displacement and two bending turns
(`to_section`: `shift`, then `turn` about z and y).
"""

from ... import compiled
from ...chain_kernels.spatial import se3_exp
from ...model.bodies import add_force_to_link, add_to_link
from ...model.frame_steps import add_motion, transport
from ...model.layout import DATA_TYPE, MODEL_TYPE
from ...tuple_tables import unpack

_jit, _inline = compiled.jit, compiled.inline


@_jit        # not inlined: one copy for points, tips and sections (compile time)
def shift(model_table, data_table, j, start, m, x, phi, g, q, v, count):
    """Step to a modal section at x: Trans(x e1 + u(x, q)) (``modal_beam``), its S and c.

    u = (-1/2 q^T G q, W q on y-modes, W q on z-modes); S columns (0, du/dq_k) =
    (0, W_k e_plane - (G q)_k e1); c = (0, -(q'^T G q') e1).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    plane = model.mode_plane[j]
    vgv = offset(plane, start, m, x, phi, g, q, v, data.gq, data.p, data.beam_rd)
    for i in range(3):
        data.s[i] = 0.0
        data.s[3 + i] = data.beam_rd[i]
        for col in range(3):
            data.R[i, col] = 1.0 if i == col else 0.0
    transport(data.R, data.p, data, count)
    for k in range(m):
        c = start + k
        data.J[3 + plane[k], c] += phi[k]
        data.J[3, c] -= data.gq[k]
    add_motion(data, data.s)
    data.alpha[3] -= vgv


@_inline
def offset(plane, start, m, x, phi, g, q, v, gq, r, rd):
    """Write a modal section's offset r = x e1 + u(x, q), its rate rd = S q' and G q.

    u = (-1/2 q^T G q, W q on y-modes, W q on z-modes) (``modal_beam``); returns q'^T G q'.
    """
    quad = 0.0
    vgv = 0.0
    r[0], r[1], r[2] = x, 0.0, 0.0
    rd[0], rd[1], rd[2] = 0.0, 0.0, 0.0
    for k in range(m):
        gqk = 0.0
        gv = 0.0
        for c in range(m):
            gqk += g[k, c] * q[start + c]
            gv += g[k, c] * v[start + c]
        gq[k] = gqk
        quad += gqk * q[start + k]
        vgv += gv * v[start + k]
        r[plane[k]] += phi[k] * q[start + k]
        rd[plane[k]] += phi[k] * v[start + k]
        rd[0] -= gqk * v[start + k]
    r[0] -= 0.5 * quad
    return vgv


@_jit        # not inlined: four copies otherwise (compile time)
def turn(model_table, data_table, j, start, m, slope, plane, axis, sign, q, v, count):
    """Step by a bending turn of a section of link j about e_axis (``modal_beam``).

    The angle is sign * sum of W_k'(x) q_k (``slope``: W'(x)) over the modes of ``plane``:
    psi_z (axis 2, sign 1) from the y-plane modes, psi_y (axis 1, sign -1) from the
    z-plane ones. S has sign W_k'(x) in row ``axis``; c = 0 (the angle is linear in q).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    angle = 0.0
    rate = 0.0
    for k in range(m):
        if model.mode_plane[j, k] == plane:
            angle += sign * slope[k] * q[start + k]
            rate += sign * slope[k] * v[start + k]
    for i in range(6):
        data.t2[i] = 0.0
        data.s[i] = 0.0
    data.t2[axis] = angle
    data.s[axis] = rate
    se3_exp(data.t2, data.R, data.p)
    transport(data.R, data.p, data, count)
    for k in range(m):
        if model.mode_plane[j, k] == plane:
            data.J[axis, start + k] += sign * slope[k]
    add_motion(data, data.s)


@_jit        # not inlined: one copy serves the three uses of `_link`
def points(model_table, data_table, j, start, m, q, v, count, bodies):
    """Add the point masses of floating-frame link j, summed in its frame (``modal_beam``).

    Point i (mass w, at r = x e1 + u(x, q) in the link frame, r' = S q', S = du/dq with
    columns W_k e_plane - (G q)_k e1) moves at Gamma eta, Gamma = [-hat(r), I, S], for
    eta = (w, v, q') of the link frame and its modes. Summed over the points:

        M_b = sum w Gamma^T Gamma,  F_b = sum Gamma^T w a,
        a = a_v + a_w x r + w x r' - (q'^T G q') e1 + w x (v + w x r + r')

    (a: the point's acceleration at zero generalized acceleration, alpha = (a_w, a_v) the
    frame's, gravity in it). ``bodies`` 1: M += E^T M_b E, h += E^T F_b, E the rows of
    eta per active column (J's, then the modal rates); 2: link j's articulated sums
    (`add_to_link`, the frame's pose relative to the handle); 3: the gravity energy;
    4 (inverse dynamics): F_b + M_b E a to link j's p_H and p_l (`add_force_to_link`).
    """
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    size = 6 + m
    Mb, F, plane = data.beam_M, data.beam_F, model.mode_plane[j]
    r, rd, acc, eta, alpha = data.beam_r, data.beam_rd, data.beam_a, data.eta, data.alpha
    for a_ in range(size):
        F[a_] = 0.0
        for b_ in range(size):
            Mb[a_, b_] = 0.0
    total = 0.0
    for point in range(model.point_start[j], model.point_start[j] + model.point_count[j]):
        w, phi = model.point_mass[point], model.point_phi[point]
        vgv = offset(plane, start, m, model.point_x[point], phi, model.point_g[point],
                     q, v, data.gq, r, rd)
        total += w
        if bodies == 3:
            for i in range(3):
                F[3 + i] += w * r[i]              # first moment
            continue
        # velocity u = v + w x r + r' (t1), then a (module doc)
        for i in range(3):
            data.t1[i] = eta[3 + i] + rd[i]
        data.t1[0] += eta[1] * r[2] - eta[2] * r[1]
        data.t1[1] += eta[2] * r[0] - eta[0] * r[2]
        data.t1[2] += eta[0] * r[1] - eta[1] * r[0]
        for i in range(3):
            acc[i] = alpha[3 + i]
        acc[0] += (alpha[1] * r[2] - alpha[2] * r[1] + eta[1] * (rd[2] + data.t1[2])
                   - eta[2] * (rd[1] + data.t1[1]) - vgv)
        acc[1] += (alpha[2] * r[0] - alpha[0] * r[2] + eta[2] * (rd[0] + data.t1[0])
                   - eta[0] * (rd[2] + data.t1[2]))
        acc[2] += (alpha[0] * r[1] - alpha[1] * r[0] + eta[0] * (rd[1] + data.t1[1])
                   - eta[1] * (rd[0] + data.t1[0]))
        f0, f1, f2 = w * acc[0], w * acc[1], w * acc[2]
        F[0] += r[1] * f2 - r[2] * f1
        F[1] += r[2] * f0 - r[0] * f2
        F[2] += r[0] * f1 - r[1] * f0
        F[3] += f0
        F[4] += f1
        F[5] += f2
        rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
        for a_ in range(3):
            Mb[a_, a_] += w * rr
            for b_ in range(a_, 3):
                Mb[a_, b_] -= w * r[a_] * r[b_]
        Mb[0, 4] -= w * r[2]        # w hat(r): the (w, v) block
        Mb[0, 5] += w * r[1]
        Mb[1, 3] += w * r[2]
        Mb[1, 5] -= w * r[0]
        Mb[2, 3] -= w * r[1]
        Mb[2, 4] += w * r[0]
        S = data.beam_S
        for k in range(m):
            S[0, k] = -data.gq[k]
            S[1, k] = 0.0
            S[2, k] = 0.0
            S[plane[k], k] += phi[k]
            s0, s1, s2 = S[0, k], S[1, k], S[2, k]
            Mb[0, 6 + k] += w * (r[1] * s2 - r[2] * s1)
            Mb[1, 6 + k] += w * (r[2] * s0 - r[0] * s2)
            Mb[2, 6 + k] += w * (r[0] * s1 - r[1] * s0)
            Mb[3, 6 + k] += w * s0
            Mb[4, 6 + k] += w * s1
            Mb[5, 6 + k] += w * s2
            F[6 + k] += s0 * f0 + s1 * f1 + s2 * f2
            for l_ in range(k + 1):
                Mb[6 + l_, 6 + k] += w * (S[0, l_] * s0 + S[1, l_] * s1 + S[2, l_] * s2)
    if bodies == 3:
        for i in range(3):
            position = data.pose_p[i] * total
            for c in range(3):
                position += data.pose_R[i, c] * F[3 + c]
            data.energy[0] -= model.gravity[i] * position
        return
    for a_ in range(3):
        Mb[3 + a_, 3 + a_] = total
    for a_ in range(size):
        for b_ in range(a_):
            Mb[a_, b_] = Mb[b_, a_]
    E = data.beam_E                 # rows of eta per active column
    for a_ in range(count):
        c = data.cols[a_]
        for i in range(6):
            E[i, a_] = data.J[i, c]
        for k in range(m):
            E[6 + k, a_] = 1.0 if c == start + k else 0.0
    if bodies == 2:
        add_to_link(Mb, size, data.pose_R, data.pose_p, E, count, F, data_table, j)
        return
    if bodies == 4:                 # inverse dynamics: F += M_b E a
        for i in range(size):
            sum_ = 0.0
            for a_ in range(count):
                sum_ += E[i, a_] * data.given[data.cols[a_]]
            data.beam_rate[i] = sum_
        for r_ in range(size):
            sum_ = 0.0
            for i in range(size):
                sum_ += Mb[r_, i] * data.beam_rate[i]
            F[r_] += sum_
        add_force_to_link(size, data.pose_R, data.pose_p, E, count, F, data_table, j)
        return
    ME = data.beam_ME               # M += E^T M_b E
    for a_ in range(count):
        for r_ in range(size):
            sum_ = 0.0
            for i in range(size):
                sum_ += Mb[r_, i] * E[i, a_]
            ME[r_, a_] = sum_
    for a_ in range(count):
        ca = data.cols[a_]
        for b_ in range(a_, count):
            cb = data.cols[b_]
            sum_ = 0.0
            for i in range(size):
                sum_ += E[i, a_] * ME[i, b_]
            data.mass[ca, cb] += sum_
            if cb != ca:
                data.mass[cb, ca] += sum_
    for a_ in range(count):         # h += E^T F
        sum_ = 0.0
        for i in range(size):
            sum_ += E[i, a_] * F[i]
        data.bias[data.cols[a_]] += sum_


@_inline
def to_section(model_table, data_table, j, start, m, x, phi, slope, g, q, v, count):
    """Step from link j's frame to its modal section at x: the shift, then both turns."""
    shift(model_table, data_table, j, start, m, x, phi, g, q, v, count)
    turn(model_table, data_table, j, start, m, slope, 1, 2, 1.0, q, v, count)
    turn(model_table, data_table, j, start, m, slope, 2, 1, -1.0, q, v, count)


@_inline
def walk(model, model_table, data_table, j, start, m, q, v, count, bodies):
    """Walk link j's beam from its joint frame to its tip: its points' body, then the tip.

    ``model``: the unpacked ``model_table`` (an inlined step unpacks no table: each unpack
    adds to its caller's compile time).
    """
    if bodies:
        points(model_table, data_table, j, start, m, q, v, count, bodies)
    to_section(model_table, data_table, j, start, m, model.length[j], model.tip_phi[j],
               model.tip_slope[j], model.tip_g[j], q, v, count)
