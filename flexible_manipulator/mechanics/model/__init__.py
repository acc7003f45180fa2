"""The one chain model: rigid links, floating-frame beams and Cosserat rods in any mix.

``chain``: the model (`chain.Chain`, built by ``links.chain_from_links``: the model API);
``link_part``: one link of any kind in it (`link_part.LinkPart`); ``frame_transforms``:
the TF tree's parent-to-child transforms;
``layout`` and ``arrays``: its constant arrays and workspace (one line per field, each
link kind's rows from ``links.<kind>.layout``); ``kernels``: the walk (M and h, inverse
dynamics, section kinematics, frames, energy, steppers), made of ``frame_steps`` and
``bodies`` and each link kind's ``links.<kind>.kernels``; ``articulated``: the O(n)
forward dynamics.
"""
