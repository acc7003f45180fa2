"""Model -> data -> dynamics of the flexible two-link arm, without ROS."""
import numpy as np

from flexible_manipulator.model_config import load_model, resolve_model_path

model = load_model(resolve_model_path('two_link_flexible'))  # config/models/<name>.yaml
data = model.create_data()        # the workspace every algorithm writes into (no allocation)
q = model.neutral_configuration()  # joint angles [rad], then modal coordinates
q[:2] = [0.3, 1.2]
v = np.zeros(model.nv)            # joint rates [rad/s], then modal rates
v[:2] = [1.0, -0.5]
M = model.mass_matrix(data, q)    # nv x nv [kg m^2]: a copy; out= reuses an array
h = model.bias_forces(data, q, v)  # gravity, Coriolis, elastic and damping forces
a = model.forward_dynamics(data, q, v, np.zeros(model.nu))  # q'' = M^-1 (B u - h)
print('coordinates:', ', '.join(model.coordinate_names))
print('accelerations with zero torque, spinning:', np.array2string(a, precision=3))
