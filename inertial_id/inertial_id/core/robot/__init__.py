"""The robot: its profile (the checked YAML), its pinocchio model and the built-in ones, closed
chains, the inertial parameters and their conventions, regressors, the robot's parameter box, and
what a robot_state_publisher would give RViz."""
