"""What enters and leaves the suite as data: rosbag2 recordings, run folders, the topic names, the
SROS2 policy of the node set, and the markers RViz shows."""
