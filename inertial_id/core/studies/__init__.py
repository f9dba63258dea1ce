"""Closed-loop simulation studies (ROS-free): each module runs one study and returns a JSON report."""
