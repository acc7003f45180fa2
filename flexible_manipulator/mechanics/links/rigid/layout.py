"""The rigid kind's rows of the chain model's arrays (``model.layout``): none of its own.

Its step is the translation by ``length`` (a field every link has).
"""

CODE = 0                    # ``link_kind`` of a rigid link

MODEL = ()

WORKSPACE = ()
