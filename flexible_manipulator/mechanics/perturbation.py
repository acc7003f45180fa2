"""A chain whose physical parameters differ from its model's by given factors.

A real arm never matches its model. `perturbed` returns a copy of a fixed- or floating-base
chain (the one chain model, ``model.chain.Chain``) with the same links,
coordinates and names and these parameters scaled (every factor > 0, 1 = the model):

* ``stiffness``: the bending stiffness EI of every beam, every section stiffness (GJ, EI,
  EA, GA) of every rod [-]; a mode's frequency scales with its square root;
* ``damping``: the modal damping ratio of every beam, the Kelvin-Voigt relaxation time of
  every rod [-];
* ``payload``: mass and inertia of the payload at the tip of the last link [-] (the tool
  and what it carries: what changes on a real arm from one task to the next);
* ``friction``: the friction of every joint, viscous (its damping D) and Coulomb (its
  level F_c; the regularization v_s stays, ``friction``) together [-]: one factor, as a
  joint's lubrication and temperature change both;
* ``armature``: the reflected rotor inertia of every joint [-].

The controller's robustness check (``control.uncertainty``) and the mismatch benchmark
drive plants built with it against a controller that keeps the model.
"""

import dataclasses
import math

import numpy as np

from .link_description import RigidBody
from .links import chain_from_links, kind_of

# The factors `perturbed` takes, in the order of its signature, and what each scales.
FACTORS = ('stiffness', 'damping', 'payload', 'friction', 'armature')
SCALES = {'stiffness': 'bending stiffness of the beams, section stiffness of the rods',
          'damping': 'modal damping ratio of the beams, relaxation time of the rods',
          'payload': "mass and inertia of the payload at the last link's tip",
          'friction': 'viscous and Coulomb friction of the joints',
          'armature': 'reflected rotor inertia of the joints'}


def _factor(name, value):
    """Check one factor: a finite number > 0."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f'{name}: expected a factor > 0, got {value!r}') from None
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f'{name}: expected a finite factor > 0, got {value!r}')
    return value


def _link(link, factors, last):
    """Copy one ``link_description.Link`` with the factors applied (module doc)."""
    joint = dataclasses.replace(link.joint, damping=link.joint.damping * factors['friction'],
                                friction=link.joint.friction * factors['friction'],
                                armature=link.joint.armature * factors['armature'])
    changes = {'joint': joint}
    changes.update(kind_of(link).scaled(link, factors['stiffness'], factors['damping']))
    if last:
        payload, scale = link.payload, factors['payload']
        changes['payload'] = dataclasses.replace(
            payload, mass=payload.mass * scale,
            inertia=tuple(tuple(x * scale for x in row) for row in np.asarray(
                payload.inertia, dtype=float).tolist()))
    return dataclasses.replace(link, **changes)


def perturbed(model, stiffness=1.0, damping=1.0, payload=1.0, friction=1.0, armature=1.0):
    """Return ``model`` with its parameters scaled by the factors (module doc).

    Raises ValueError naming a factor that is not a finite number > 0, or when the model
    was not built from links (a chain assembled from parts in code).
    """
    factors = {name: _factor(name, value) for name, value in
               zip(FACTORS, (stiffness, damping, payload, friction, armature))}
    links = getattr(model, 'links', None)
    if not links:
        raise ValueError(f'model {model.name!r}: only a chain built from links (a model '
                         'file) can be perturbed')
    links = [_link(link, factors, i == len(links) - 1) for i, link in enumerate(links)]
    return _rebuilt(model, links)


def payload_alone(model):
    """Return ``model``'s payload on massless, frictionless rigid links, or None.

    Inverse dynamics is linear in the bodies' inertias, so this chain's inverse dynamics
    (and gravity) at any state is the payload's share of ``model``'s: the regressor of a
    payload factor, from one walk. None when the model has no payload, is not built from
    links, has a floating base (whose body would count) or a link with elastic coordinates.
    """
    links = getattr(model, 'links', None)
    if (not links or model.floating_base is not None or links[-1].payload is None
            or links[-1].payload.mass <= 0.0
            or any(kind_of(link).is_flexible(link) for link in links)):
        return None
    bare = RigidBody()
    links = [dataclasses.replace(      # a rigid twin's beam or rod keeps its mass: none
        link, body=bare, beam=None, rod=None,
        payload=link.payload if i == len(links) - 1 else bare,
        joint=dataclasses.replace(link.joint, damping=0.0, armature=0.0, friction=0.0))
        for i, link in enumerate(links)]
    return _rebuilt(model, links)


def _rebuilt(model, links):
    """Return the chain of ``links`` with ``model``'s base, frames and gravity."""
    return chain_from_links(model.name, links, model.gravity_base,
                            base_frame=model.base_frame, base_xyz=model.base_xyz,
                            base_rpy=model.base_rpy, tool_frame=model.tool_frame,
                            geometric_stiffening=model.geometric_stiffening,
                            floating_base=model.floating_base)
