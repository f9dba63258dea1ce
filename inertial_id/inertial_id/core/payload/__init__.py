"""The identified payload handed on: to the driver's set-load service or a latched topic, and as
text (a URDF fragment, a YAML of the values with their intervals)."""
