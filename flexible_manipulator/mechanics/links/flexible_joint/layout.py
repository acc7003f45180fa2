"""The flexible joint's rows of the chain model's arrays (``model.layout``): none of its own.

Its gear's stiffness k and damping d are its coordinate's entries of ``stiffness`` and
``damping``, its rotor inertia the joint's ``armature``, its turn about the joint's
``joint_motion`` and its rigid step ``length``: fields every link has.
"""

CODE = 3                    # ``link_kind`` of a link behind a flexible joint

MODEL = ()

WORKSPACE = ()
