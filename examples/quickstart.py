"""Load a URDF, look at its kinematic modules, run the DeNOC algorithms, compare with Pinocchio."""

import numpy as np
import pinocchio as pin

import denoc_pin as dp

urdf = dp.models.bundled_file("gripper")  # the paper's gripper, shipped with denoc_pin; or your robot's file
model = dp.load_urdf(urdf)  # same q/v layout as pinocchio.buildModelFromUrdf
data = model.create_data()
print(model)  # the module tree of the paper's Fig. 4

q = np.deg2rad([-60.0, 10.0, 20.0, 90.0])
v = np.array([0.1, -0.2, 0.3, 0.0])
a = np.array([1.0, 0.0, -1.0, 0.5])
tau = dp.inverse_dynamics(model, data, q, v, a)  # Table 1
ddq = dp.forward_dynamics(model, data, q, v, tau)  # Table 3, UDUᵀ
U, D = dp.udut(model, data, q)  # GIM = U D Uᵀ

pm = pin.buildModelFromUrdf(str(urdf))
pd = pm.createData()
print("tau          :", tau)
print("pinocchio    :", pin.rnea(pm, pd, q, v, a))
print("FD(ID(a)) - a:", ddq - a)
print("|U D Uᵀ - crba|:", np.abs(U @ D @ U.T - pin.crba(pm, pd, q)).max())
