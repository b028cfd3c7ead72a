"""The notebook front end: the %dra magics, widgets and rich display."""
