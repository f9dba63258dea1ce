"""The studies behind the ``*-study`` commands (ROS-free; each runs one study and returns a JSON
report), and the report of a recorded run (``inertial-id report``)."""
