"""Geometrically exact (Reissner/Simo) Cosserat links, strain-parameterized (Boyer et al.).

``strain_basis``: which strains a link has and their polynomial basis B(X);
``rod``: one link's discretization (Magnus steps between quadrature nodes) and its passes;
``chain``: serial chains of joints and Cosserat links (mass matrix, bias forces, energy).
"""
