"""Studies: parameter sweeps of the closed loop, run locally or on a Ray cluster.

A study file (`spec`) names a base graph and the fields to vary; `runner` runs its runs in
local worker processes or as Ray tasks (`worker`: one run, never raising), streams the rows
into one Parquet table (`table`), resumable, and draws the main figures against the swept
parameters (`plots`); `cli` is ``ros2 run flexible_manipulator sweep study.yaml``. Without
ROS: a run is the ROS-free closed loop (`closed_loop`) unless the study asks for the ROS
graph (`ros_graph`: the nodes started as processes by bringup). doc/studies.md.
"""
