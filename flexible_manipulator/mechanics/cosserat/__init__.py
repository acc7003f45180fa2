"""Geometrically exact (Reissner/Simo) Cosserat links, strain-parameterized (Boyer et al.).

``strain_basis``: which strains a link has and their polynomial basis B(X);
``rod``: one link's discretization (Magnus steps between quadrature nodes). The chain
model that walks them is ``mechanics.model``.
"""
