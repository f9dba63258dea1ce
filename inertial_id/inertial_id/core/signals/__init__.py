"""From the drivers' streams to rows: the streams as the real drivers publish them, the checked
sensor messages, filtering and differentiation with their error bounds, the effort's alignment,
momentum windows, the payload's wrench rows, and the row builder that joins them."""
