"""Readable reference implementations: what the tests check the compiled kernels against.

``cosserat_chain``: a Cosserat chain's M, h, v', energy and section frames in NumPy, body
by body; ``cosserat_rod``: a rod's Magnus steps; ``discrete_rod``: the planar
finite-element Reissner rod. Nothing the plant, the
controller or the nodes run imports this package (test/test_layering.py).
"""
