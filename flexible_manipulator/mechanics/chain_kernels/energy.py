"""Potential energy of the chain (gravity and modal stiffness), for energy checks."""

from .. import compiled
from ..chain_layout import DATA_TYPE, MODEL_TYPE
from ..tuple_tables import unpack
from .beam_section import section_position
from .kinematics import placements

_jit = compiled.jit


@_jit
def _gravity_work(g, R, p, mass, first_moment):
    """Return g . (m p + R (m c)): minus the gravity potential of a body at pose (R, p)."""
    s = 0.0
    for r in range(3):
        s += g[r] * (mass * p[r] + R[r, 0] * first_moment[0] + R[r, 1] * first_moment[1]
                     + R[r, 2] * first_moment[2])
    return s


@_jit
def potential_energy(model_table, data_table, q):
    """V = -sum m g . p_C (all rigid bodies, payloads, beam points) + q^T K q / 2 [J].

    Positions are taken in the base frame; a floating base at (R, p) adds -m_total g . p and
    sees gravity as R^T g. On the tables of the constants and the workspace (`tuple_tables`).
    """
    placements(model_table, data_table, q)
    model, data = unpack(model_table, MODEL_TYPE), unpack(data_table, DATA_TYPE)
    g, R, g0 = data.base_g, data.base_R, model.gravity
    for i in range(3):
        g[i] = R[0, i] * g0[0] + R[1, i] * g0[1] + R[2, i] * g0[2] if model.floating else g0[i]
    energy = 0.0
    total = 0.0
    if model.floating:
        energy -= _gravity_work(g, data.eye3, data.zero3, model.base_mass,
                                model.base_first_moment)
        total = model.base_mass
    for j in range(model.joint_type.shape[0]):
        total += model.mass[j] + model.payload_mass[j]
        energy -= _gravity_work(g, data.link_R[j], data.link_p[j], model.mass[j],
                                model.first_moment[j])
        energy -= _gravity_work(g, data.tip_R[j], data.tip_pos[j], model.payload_mass[j],
                                model.payload_first_moment[j])
        start = model.mode_start[j]
        count = model.mode_count[j]
        for point in range(model.point_start[j], model.point_start[j + 1]):
            section_position(model.point_phi[point], model.point_g[point],
                             model.mode_plane[j], start, count, q, data.point_r, data.point_gq)
            data.point_r[0] += model.point_x[point]
            weight = model.point_mass[point]
            for i in range(3):
                data.point_r[i] *= weight       # first moment of the point about the link frame
            energy -= _gravity_work(g, data.link_R[j], data.link_p[j], weight, data.point_r)
            total += weight
        for k in range(count):
            energy += 0.5 * model.stiffness[start + k] * q[start + k] ** 2
    if model.floating:
        b = model.stiffness.shape[0] - 6
        for i in range(3):
            energy -= total * model.gravity[i] * q[b + i]
    return energy
